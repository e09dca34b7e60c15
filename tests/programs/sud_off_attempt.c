// A program that tries to switch system call capture off:
// prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) returns
// 0 (natively there is nothing to turn off), then raw getppid calls are made
// from generated code 7 times, and from a fork child and a thread as well.
// Under `strata run --ext count` they must all still be counted.
// cflags: -pthread
// under-count: getppid>=7
#include "util.h"
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#endif

static long (*fn)(void);

static void *thread(void *arg) {
    (void)arg;
    return (void *)fn();
}

int main(void) {
    int r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
    printf("PR_SYS_DISPATCH_OFF returned %d\n", r);
    CHECK(r == 0);
    static const unsigned char code[] = {0xb8, 0x6e, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xc3};
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    memcpy(page, code, sizeof code);
    CHECK(mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0);
    fn = (long (*)(void))page;
    long expected = getppid();
    int same = 0;
    for (int i = 0; i < 7; i++) same += fn() == expected;
    printf("generated getppid after the prctl: %d/7 correct\n", same);
    CHECK(same == 7);

    pthread_t t;
    void *ret;
    CHECK(pthread_create(&t, NULL, thread, NULL) == 0);
    CHECK(pthread_join(t, &ret) == 0);
    printf("from a thread: correct=%d\n", (long)ret == expected);

    fflush(stdout);
    pid_t me = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0);
        printf("child: prctl %d, generated getppid is the parent: %d\n", r, fn() == me);
        exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WEXITSTATUS(st) == 0);
    return 0;
}
