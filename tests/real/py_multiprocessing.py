"""multiprocessing: a Pool of 2 with the start method given in argv[1]."""
import multiprocessing as mp
import os
import sys


def square(x):
    return x * x


def whoami(_):
    return os.getpid()


def fail(x):
    if x == 3:
        raise ValueError("bad %d" % x)
    return x


if __name__ == "__main__":
    method = sys.argv[1]
    ctx = mp.get_context(method)
    with ctx.Pool(2) as pool:
        print(method, "map:", pool.map(square, range(20)))
        print(method, "imap_unordered sum:", sum(pool.imap_unordered(square, range(1000), chunksize=10)))
        print(method, "apply_async:", pool.apply_async(square, (12,)).get(timeout=60))
        pids = set(pool.map(whoami, range(50), chunksize=1))
        print(method, "workers are children:", all(p != os.getpid() for p in pids), len(pids) <= 2)
        try:
            pool.map(fail, range(5))
        except ValueError as e:
            print(method, "error propagated:", e)
    q = ctx.Queue()
    p = ctx.Process(target=q.put, args=("from a process",))
    p.start()
    print(method, "queue:", q.get(timeout=60))
    p.join()
    print(method, "process exitcode:", p.exitcode)
