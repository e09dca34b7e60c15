// Deep recursion on the main thread's stack: 6000 frames of ~1 KiB each
// (about 6 MiB, past the initial stack mapping so the kernel must grow it)
// compute a checksum; then the same on a thread with a 16 MiB stack.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <sys/resource.h>

__attribute__((noinline)) static unsigned long recurse(int depth, unsigned long acc) {
    volatile char frame[1000];
    frame[0] = (char)depth;
    frame[999] = (char)(depth >> 8);
    if (depth == 0) return acc;
    unsigned long r = recurse(depth - 1, acc * 31 + (unsigned char)frame[0]);
    return r + (unsigned char)frame[999];
}

static void *thread(void *arg) {
    (void)arg;
    return (void *)recurse(12000, 1);
}

int main(void) {
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_STACK, &rl) == 0);
    CHECK(rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 8 * 1024 * 1024);
    unsigned long r = recurse(6000, 1);
    printf("main thread, 6000 frames: %lx\n", r);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 16 * 1024 * 1024);
    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, &attr, thread, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    printf("thread with a 16 MiB stack, 12000 frames: %lx\n", (unsigned long)ret);
    return 0;
}
