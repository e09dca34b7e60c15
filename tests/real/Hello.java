// A small JVM workload for strata's tests. HotSpot leans on the kernel in ways few
// programs do: many threads, JIT-compiled code in fresh executable mappings, safepoint
// polls that fault on a protected page, and implicit null checks in compiled code: a
// NullPointerException raised from JIT-compiled code starts as a SIGSEGV that the
// JVM's own handler turns into the exception.
//
// All output is deterministic.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

public class Hello {
    static final class Box {
        int value;
        Box(int v) { value = v; }
    }

    // Hot method: compiled by C1/C2 with an implicit null check on b.value, so
    // a null b in compiled code faults (SIGSEGV) and becomes an NPE.
    static int unbox(Box b) {
        return b.value;
    }

    static long collatzSteps(long n) {
        long steps = 0;
        while (n != 1) {
            n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
            steps++;
        }
        return steps;
    }

    public static void main(String[] args) throws Exception {
        // 1. JIT-heavy loop: long enough for tiered compilation up to C2 and OSR.
        long best = 0, bestN = 0;
        for (long n = 1; n < 300_000; n++) {
            long s = collatzSteps(n);
            if (s > best) { best = s; bestN = n; }
        }
        System.out.println("collatz: longest below 300000 is " + bestN + " with " + best + " steps");

        // 2. Null pointer exceptions, first interpreted, then from compiled code.
        Box[] boxes = new Box[1000];
        for (int i = 0; i < boxes.length; i++) boxes[i] = (i % 100 == 99) ? null : new Box(i);
        long sum = 0;
        int npes = 0;
        for (int round = 0; round < 200; round++) {
            for (Box b : boxes) {
                try {
                    sum += unbox(b);
                } catch (NullPointerException e) {
                    npes++;
                }
            }
        }
        System.out.println("npe: caught " + npes + ", sum " + sum);

        String s = null;
        try {
            s.length();
        } catch (NullPointerException e) {
            System.out.println("npe message: " + e.getMessage());
        }

        // 3. Threads: a pool, a latch, shared atomics and a concurrent map.
        int nthreads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(nthreads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong counter = new AtomicLong();
        ConcurrentHashMap<Integer, Long> perTask = new ConcurrentHashMap<>();
        List<Future<Long>> futures = new ArrayList<>();
        for (int t = 0; t < 12; t++) {
            final int task = t;
            futures.add(pool.submit(() -> {
                start.await();
                long local = 0;
                for (int i = 0; i < 100_000; i++) {
                    counter.incrementAndGet();
                    local += collatzSteps(i + 1 + task) & 1;
                }
                perTask.put(task, local);
                return local;
            }));
        }
        start.countDown();
        long total = 0;
        for (Future<Long> f : futures) total += f.get();
        pool.shutdown();
        System.out.println("threads: counter " + counter.get() + ", tasks " + perTask.size() + ", total " + total);

        // 4. Plain threads with join and a synchronized monitor.
        final Object lock = new Object();
        final int[] shared = {0};
        Thread[] ts = new Thread[4];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = new Thread(() -> {
                for (int j = 0; j < 50_000; j++) {
                    synchronized (lock) { shared[0]++; }
                }
            }, "worker-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("monitor: " + shared[0]);

        // 5. Some garbage, so the GC runs (and stops the world through safepoints).
        long kept = 0;
        for (int i = 0; i < 200; i++) {
            byte[] junk = new byte[1 << 20];
            junk[i] = (byte) i;
            kept += junk[i];
        }
        System.gc();
        System.out.println("gc: " + kept);
        System.out.println("done");
    }
}
