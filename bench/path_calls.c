/* path_calls: what the calls a compile makes most cost, one by one: ns per
 * call, the best of 7 rounds of 20,000 calls each. cc1 makes about a
 * thousand readlink calls per compile (realpath of every header, nearly all
 * answering EINVAL) and a few hundred opens (most answering ENOENT along
 * the include path), which strata looks at for the /proc/self files it
 * answers itself (runtime dispatch.rs `bottom_passes`). Run it natively and
 * under each configuration, pinned, and subtract:
 *   gcc -O2 -o /tmp/path_calls bench/path_calls.c
 *   taskset -c 1 /tmp/path_calls
 *   taskset -c 1 target/release/strata run -- /tmp/path_calls
 *   mkdir -p out && taskset -c 1 target/release/strata run --policy bench/policies/build.toml -- /tmp/path_calls
 * (build.toml lets ./out be written: it must exist where strata runs. The pread64 loop
 * reads descriptor 3: run each with `3</usr/include/stdio.h`.) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long long now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

enum { N = 20000, ROUNDS = 7 };

int main(void) {
    static const char *names[] = {"readlink EINVAL", "readlink ENOENT", "open+close", "open ENOENT", "fstatat",
                                  "fstat",           "pread 4096",      "close EBADF", "getpid",      "mmap+munmap"};
    char buf[4096];
    struct stat st;
    for (int k = 0; k < 10; k++) {
        long long best = 1LL << 62;
        for (int r = 0; r < ROUNDS; r++) {
            long long t0 = now();
            for (int i = 0; i < N; i++) {
                switch (k) {
                case 0: readlink("/usr/include/stdio.h", buf, sizeof buf); break;
                case 1: readlink("/usr/include/no-such-header.h", buf, sizeof buf); break;
                case 2: close(open("/usr/include/stdio.h", O_RDONLY)); break;
                case 3: open("/usr/include/no-such-header.h", O_RDONLY); break;
                case 4: fstatat(AT_FDCWD, "/usr/include/stdio.h", &st, 0); break;
                case 5: fstat(0, &st); break;
                case 6: pread(3, buf, sizeof buf, 0); break;
                case 7: close(999); break;
                case 8: getpid(); break;
                case 9: munmap(mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 4096); break;
                }
            }
            long long d = now() - t0;
            if (d < best) best = d;
        }
        printf("%-16s %7.1f ns\n", names[k], (double)best / N);
    }
    return 0;
}
