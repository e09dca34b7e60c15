// A signal that arrives while a process is exec'ing: natively it is either taken by the
// old image's handler before the exec or, pending, by the new image (whose disposition is
// the default one: here it kills it). Never is it left blocked in the new image. 200
// children each install a SIGUSR1 handler and exec this program again ("check"), while the
// parent sends them SIGUSR1 from the moment they exist; the new image reports whether it
// starts with SIGUSR1 blocked. Under strata the exec goes through strata's code, where a
// signal is deferred (blocked until the call ends): the exec must not carry that block.
#include "util.h"
#include <signal.h>
#include <sys/wait.h>

static volatile sig_atomic_t got;
static void on_usr1(int sig) {
    (void)sig;
    got++;
}

static int check(void) {
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL);
    char line[256];
    unsigned long long blk = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "SigBlk: %llx", &blk) == 1) break;
    fclose(f);
    return blk & (1ull << (SIGUSR1 - 1)) ? 3 : 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "check")) return check();
    int blocked = 0, other = 0;
    for (int i = 0; i < 200; i++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr1;
            CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
            execl("/proc/self/exe", argv[0], "check", (char *)NULL);
            _exit(4);
        }
        for (int k = 0; k < 50; k++) kill(pid, SIGUSR1);
        int st;
        CHECK(waitpid(pid, &st, 0) == pid);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
            blocked++;
        else if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && !(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1))
            other++;
    }
    printf("children that started with SIGUSR1 blocked: %d; other outcomes: %d\n", blocked, other);
    return 0;
}
