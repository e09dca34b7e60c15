// An exec chain: the program re-executes itself (argv[0]) with a counter in
// argv[1] decremented each time, carrying an environment variable that grows
// by one character per step and an inherited file descriptor (a CLOEXEC one
// must be gone after exec), with SIGUSR1 blocked and SIGUSR2 ignored (both
// survive exec), and finally execs /bin/echo.
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <signal.h>

extern char **environ;

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 5;
    const char *trail = getenv("CHAIN_TRAIL");
    printf("step %d, trail '%s', argc %d\n", n, trail ? trail : "", argc);

    if (argc > 3) {
        /* Inherited descriptors from the previous step. */
        int keep = atoi(argv[2]), gone = atoi(argv[3]);
        char c;
        CHECK(lseek(keep, 0, SEEK_SET) == 0);
        CHECK(read(keep, &c, 1) == 1 && c == 'k');
        CHECK(fcntl(gone, F_GETFD) == -1 && errno == EBADF);
        close(keep);
    }
    /* A blocked signal stays blocked across exec; an ignored one stays ignored. */
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    struct sigaction sa;
    sigaction(SIGUSR2, NULL, &sa);
    printf("  SIGUSR1 blocked: %d, SIGUSR2 ignored: %d\n", sigismember(&cur, SIGUSR1), sa.sa_handler == SIG_IGN);
    fflush(stdout);

    if (n > 0) {
        char num[16], keepfd[16], gonefd[16], t[64];
        snprintf(num, sizeof num, "%d", n - 1);
        snprintf(t, sizeof t, "%s%c", trail ? trail : "", 'a' + n - 1);
        setenv("CHAIN_TRAIL", t, 1);
        FILE *f = tmpfile();
        CHECK(f != NULL);
        CHECK(fputc('k', f) == 'k' && fflush(f) == 0);
        int keep = fileno(f);
        int gone = open("/dev/null", O_RDONLY | O_CLOEXEC);
        CHECK(gone >= 0);
        snprintf(keepfd, sizeof keepfd, "%d", keep);
        snprintf(gonefd, sizeof gonefd, "%d", gone);
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, SIGUSR1);
        sigprocmask(SIG_BLOCK, &m, NULL);
        signal(SIGUSR2, SIG_IGN);
        char *args[] = {argv[0], num, keepfd, gonefd, NULL};
        execve(argv[0], args, environ);
        CHECK(!"execve of self failed");
    }
    char *echo[] = {"echo", "chain", "ended", "with", "trail", (char *)trail, NULL};
    execve("/bin/echo", echo, environ);
    CHECK(!"execve of /bin/echo failed");
}
