// Stack overflow: unbounded recursion on the main thread runs into the end
// of the stack; the SIGSEGV is delivered on a sigaltstack (the handler's
// local lives there) and the handler leaves with siglongjmp. Done twice to
// show the alternate stack is released after the jump. A thread with its own
// small stack and alternate stack overflows the same way.
// cflags: -pthread
#include "util.h"
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

static __thread sigjmp_buf env;
static __thread char *alt;
static __thread volatile int on_alt;
static const size_t alt_size = 64 * 1024;

static void handler(int sig) {
    (void)sig;
    volatile char local;
    on_alt = (uintptr_t)&local >= (uintptr_t)alt && (uintptr_t)&local < (uintptr_t)alt + alt_size;
    siglongjmp(env, 1);
}

__attribute__((noinline)) static long recurse(long n) {
    volatile char frame[512];
    frame[0] = (char)n;
    return recurse(n + 1) + frame[0];
}

static int overflow_once(void) {
    on_alt = 0;
    if (sigsetjmp(env, 1) == 0) {
        recurse(0);
        return -1;
    }
    return on_alt;
}

static void setup_altstack(void) {
    alt = malloc(alt_size);
    CHECK(alt != NULL);
    stack_t ss = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
}

static void *thread(void *arg) {
    (void)arg;
    setup_altstack();
    return (void *)(long)overflow_once();
}

int main(void) {
    setup_altstack();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);

    printf("main thread overflow 1: handled on the alternate stack %d\n", overflow_once());
    printf("main thread overflow 2: handled on the alternate stack %d\n", overflow_once());

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, &attr, thread, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    printf("thread overflow: handled on the alternate stack %ld\n", (long)ret);
    return 0;
}
