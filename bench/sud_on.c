/* sud_on N: getpid() natively, then with Syscall User Dispatch on and its selector at ALLOW (no call traps):
 * the kernel still takes its slow entry path for every syscall of the thread. This is the floor
 * for any interposer that keeps dispatch on as its catch-all. Prints ns per call both ways.
 * Then the same with the calls made from inside the dispatch range the kernel lets through (the range set
 * to cover all of user space, as strata's own text is covered for the calls strata issues): the kernel
 * still takes the slow path, but returns from the dispatch check before it reads the selector from user
 * memory. That is the floor for calls an interposer issues from its own exempt text.
 *
 * sud_on allow|exempt|off N: the same getpid() loop as bench/getpid_libc.c (N calls, checked), with
 * dispatch on in that mode (off: not turned on), for timing from outside like the other loops
 * (bench/fast.py runs it next to them in the same rounds). Prints "sud_on MODE: N calls, N consistent". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
/* every user address from 4 KiB to 128 TiB exempt: no call can trap, the selector is never read */
#define EXEMPT_ALL 4096UL, (1UL << 47) - 8192
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static volatile char sel = 0; /* ALLOW */
static double loop(long n){ double t0=now(); for(long i=0;i<n;i++) getpid(); return (now()-t0)/n*1e9; }

static int checked_loop(const char *mode, long n) {
    int r = 0;
    if (!strcmp(mode, "allow"))
        r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &sel);
    else if (!strcmp(mode, "exempt"))
        r = prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, EXEMPT_ALL, &sel);
    else if (strcmp(mode, "off")) {
        fprintf(stderr, "sud_on: mode must be allow, exempt or off\n");
        return 2;
    }
    if (r) { perror("prctl"); return 1; }
    long pid = 0, same = 0; /* as bench/getpid_libc.c */
    for (long i = 0; i < n; i++) {
        long p = getpid();
        same += (p == pid || i == 0);
        pid = p;
    }
    printf("sud_on %s: %ld calls, %ld consistent\n", mode, n, same);
    return same == n ? 0 : 1;
}

int main(int c,char**v){
 if (c > 2) return checked_loop(v[1], atol(v[2]));
 long n=c>1?atol(v[1]):2000000;
 double a=loop(n);
 if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &sel)) { perror("prctl"); return 1; }
 double b=loop(n);
 if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) ||
     prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, EXEMPT_ALL, &sel)) { perror("prctl"); return 1; }
 double e=loop(n);
 printf("native %.1f ns, with dispatch on (ALLOW) %.1f ns, +%.1f; from the exempt range %.1f ns, +%.1f\n",
        a, b, b-a, e, e-a); }
