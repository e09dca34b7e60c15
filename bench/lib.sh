# Shared by the shell benchmarks that compare strata builds side by side
# (bench/exec-cost.sh, bench/signal-cost.sh); sourced, not run.

# The median of the numbers on standard input (separated by spaces or
# newlines; an even count gives the mean of the middle two).
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# The builds to measure: those given, or this checkout's when none was
# (sets `builds`; `root` is the checkout).
default_builds() { [ ${#builds[@]} -gt 0 ] || builds=("$root/target/release/strata"); }
