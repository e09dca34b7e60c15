"""threading: workers sharing a lock, a queue, a condition, a barrier and events."""
import queue
import threading

N_THREADS = 8
counter = 0
lock = threading.Lock()


def bump(n):
    global counter
    for _ in range(n):
        with lock:
            counter += 1


threads = [threading.Thread(target=bump, args=(20000,)) for _ in range(N_THREADS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("counter:", counter)

tasks, results = queue.Queue(), queue.Queue()


def worker():
    while True:
        item = tasks.get()
        if item is None:
            tasks.task_done()
            return
        results.put((item, sum(i * i for i in range(item))))
        tasks.task_done()


workers = [threading.Thread(target=worker) for _ in range(4)]
for w in workers:
    w.start()
for i in range(200):
    tasks.put(i)
for _ in workers:
    tasks.put(None)
tasks.join()
for w in workers:
    w.join()
got = sorted(results.get() for _ in range(results.qsize()))
print("queue results:", len(got), sum(v for _, v in got))

barrier = threading.Barrier(5)
arrived = []


def at_barrier(i):
    idx = barrier.wait(timeout=30)
    with lock:
        arrived.append(i)
    return idx


bs = [threading.Thread(target=at_barrier, args=(i,)) for i in range(5)]
for t in bs:
    t.start()
for t in bs:
    t.join()
print("barrier:", sorted(arrived))

cond = threading.Condition()
items = []


def producer():
    for i in range(100):
        with cond:
            items.append(i)
            cond.notify()


def consumer(out):
    taken = 0
    while taken < 50:
        with cond:
            while not items:
                cond.wait(timeout=30)
            items.pop()
            taken += 1
    out.append(taken)


took = []
cs = [threading.Thread(target=consumer, args=(took,)) for _ in range(2)]
for c in cs:
    c.start()
producer()
for c in cs:
    c.join()
print("condition:", took, len(items))

ev = threading.Event()
timer = threading.Timer(0.05, ev.set)
timer.start()
print("event set:", ev.wait(timeout=30))
print("local:", threading.local().__class__.__name__, threading.active_count())
