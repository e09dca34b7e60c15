// Signal calls for tests/test_trace.py: rt_sigaction, rt_sigprocmask, kill.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig) {
    got += sig;
    getppid();                                                       /* a call in the handler */
}

int main(void) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR2);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, &old);
    sigaction(SIGKILL, &sa, NULL);                                   /* EINVAL */
    sigset_t set, prev;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &prev);
    kill(getpid(), SIGUSR1);                                         /* stays pending */
    sigpending(&set);
    sigprocmask(SIG_SETMASK, &prev, NULL);                           /* delivered here */
    kill(getpid(), 0);
    /* delivered in rt_sigsuspend, which the handler interrupts: rt_sigreturn
       restores -EINTR */
    sigprocmask(SIG_BLOCK, &set, NULL);
    kill(getpid(), SIGUSR1);
    sigset_t none;
    sigemptyset(&none);
    sigsuspend(&none);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    kill(999999999, SIGUSR1);                                        /* ESRCH */
    signal(SIGUSR1, SIG_IGN);
    kill(getpid(), SIGUSR1);
    printf("sig done %d\n", (int)got);
    return 0;
}
