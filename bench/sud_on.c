/* sud_on N: getpid() natively, then with Syscall User Dispatch on and its selector at ALLOW (no call traps):
 * the kernel still takes its slow entry path for every syscall of the thread. This is the floor
 * for any interposer that keeps dispatch on as its catch-all. Prints ns per call both ways.
 * Then the same with the calls made from inside the dispatch range the kernel lets through (the range set
 * to cover all of user space, as strata's own text is covered for the calls strata issues): the kernel
 * still takes the slow path, but returns from the dispatch check before it reads the selector from user
 * memory. That is the floor for calls an interposer issues from its own exempt text. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static volatile char sel = 0; /* ALLOW */
static double loop(long n){ double t0=now(); for(long i=0;i<n;i++) getpid(); return (now()-t0)/n*1e9; }
int main(int c,char**v){ long n=c>1?atol(v[1]):2000000;
 double a=loop(n);
 if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 0, 0, &sel)) { perror("prctl"); return 1; }
 double b=loop(n);
 /* every user address from 4 KiB to 128 TiB exempt: no call can trap, the selector is never read */
 if (prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_OFF, 0, 0, 0) ||
     prctl(PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, 4096UL, (1UL << 47) - 8192, &sel)) { perror("prctl"); return 1; }
 double e=loop(n);
 printf("native %.1f ns, with dispatch on (ALLOW) %.1f ns, +%.1f; from the exempt range %.1f ns, +%.1f\n",
        a, b, b-a, e, e-a); }
