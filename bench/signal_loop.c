/* signal_loop N: N times send itself SIGUSR1 (kill), whose handler counts
 * it; prints the CPU time per signal in nanoseconds (getrusage: user +
 * system). A handled signal's whole round trip: delivery, the handler, and
 * its return through rt_sigreturn, which an interposer must emulate. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile long handled;
static void on_usr1(int sig) { (void)sig; handled++; }

static double cpu_ns(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
    pid_t me = getpid();
    double t0 = cpu_ns();
    for (long i = 0; i < n; i++) kill(me, SIGUSR1);
    double t = cpu_ns() - t0;
    if (handled != n) return 1;
    printf("%.0f\n", t / n);
    return 0;
}
