# Loaded by bench/fast-insns.sh into `gdb -batch -p PID`: counts the instructions one
# fast-path call executes, from strata's entry (`strata_fast_entry`, or
# `strata_native_entry` for a call no layer wants) back to the program's code at S_ret
# (the address the trampoline leaves in %rcx), by single-stepping. Runs CALLS calls and
# prints, for the last one (warm), the total and the count per function.
import collections
import os

import gdb

CALLS = int(os.environ.get("FAST_INSNS_CALLS", "3"))
ENTRY = os.environ.get("FAST_INSNS_ENTRY", "strata_fast_entry")

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute(f"break {ENTRY}", to_string=True)
last = None
for _ in range(CALLS):
    gdb.execute("continue", to_string=True)
    ret = int(gdb.parse_and_eval("$rcx"))
    per = collections.Counter()
    n = 0
    while n < 100000:
        pc = int(gdb.parse_and_eval("$pc"))
        if pc == ret:
            break
        f = gdb.selected_frame().name() or "?"
        per[f] += 1
        gdb.execute("stepi", to_string=True)
        n += 1
    last = (n, per)
n, per = last
print(f"INSNS {n}")
for f, k in per.most_common():
    print(f"FUNC {k} {f}")
gdb.execute("kill", to_string=True)
