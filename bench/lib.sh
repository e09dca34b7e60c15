# Shared by the shell benchmarks that compare strata builds side by side
# (bench/exec-cost.sh, bench/start-cost.sh, bench/signal-cost.sh); sourced,
# not run.

# The median of the numbers on standard input (separated by spaces or
# newlines; an even count gives the mean of the middle two).
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# The builds to measure: those given, or this checkout's when none was
# (sets `builds`; `root` is the checkout).
default_builds() { [ ${#builds[@]} -gt 0 ] || builds=("$root/target/release/strata"); }

# Runs "$@" (perf stat options if any, then a command) under `perf stat`,
# pinned to CPU 1, and prints "ms faults": its CPU time (task-clock, the
# whole process tree) and page faults (the means over the runs with -r N).
# Software events only: it works where hardware counters do not.
cpu_faults() {
    taskset -c 1 perf stat -x, -e task-clock,minor-faults "$@" 2>&1 >/dev/null |
        awk -F, '$3=="task-clock"{t=$1} $3=="minor-faults"{f=$1} END{print t, f}'
}

# cost_table UNIT PER TIMES FAULTS: a table of CPU time and faults per UNIT
# (each figure divided by PER): one row per configuration in `names`
# (native first), each but native's with what it adds over native. TIMES
# and FAULTS name associative arrays of per-round figures (space-separated)
# keyed by those names; the table shows their medians.
cost_table() {
    local unit=$1 per=$2
    local -n t=$3 f=$4
    local nm nf c
    nm=$(echo "${t[native]}" | median); nf=$(echo "${f[native]}" | median)
    printf '%-50s %12s %14s %16s %14s\n' configuration "ms per $unit" "added per $unit" "faults per $unit" "added faults"
    for c in "${names[@]}"; do
        cost_row "$c" "$(echo "${t[$c]}" | median)" "$(echo "${f[$c]}" | median)" "$nm" "$nf" "$per"
    done
}

# cost_row NAME MS FAULTS NATIVE-MS NATIVE-FAULTS PER: one row of cost_table.
cost_row() {
    awk -v n="$1" -v m="$2" -v f="$3" -v nm="$4" -v nf="$5" -v e="$6" 'BEGIN{
        if (n == "native") printf "%-50s %12.3f %14s %16.1f %14s\n", n, m/e, "", f/e, "";
        else printf "%-50s %12.3f %+14.3f %16.1f %+14.1f\n", n, m/e, (m-nm)/e, f/e, (f-nf)/e }'
}
