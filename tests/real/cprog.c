/* Compiled by gcc inside tests/test_real.py (natively and under strata), then run.
 * Uses glibc the ordinary way: stdio, files, fork/wait, a pipe, a signal handler,
 * pthreads, mmap, clock_gettime and an exit status. Output is deterministic. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig) { (void)sig; got_usr1 = 1; }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *worker(void *arg) {
    long n = (long)arg;
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    (void)argc;
    printf("argv[1]=%s\n", argv[1] ? argv[1] : "(none)");

    /* files */
    char path[] = "cprog-tmp-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 1; }
    const char msg[] = "written by cprog\n";
    if (write(fd, msg, sizeof msg - 1) != (ssize_t)(sizeof msg - 1)) { perror("write"); return 1; }
    struct stat st;
    fstat(fd, &st);
    char buf[64] = {0};
    pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    printf("file: %lld bytes: %s", (long long)st.st_size, buf);

    /* pipe + fork + wait */
    int p[2];
    if (pipe(p) != 0) { perror("pipe"); return 1; }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        dprintf(p[1], "hello from child\n");
        _exit(42);
    }
    close(p[1]);
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    int status;
    waitpid(pid, &status, 0);
    printf("child said: %s", buf);
    printf("child exit: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    /* a child killed by a signal */
    pid = fork();
    if (pid == 0) { raise(SIGTERM); _exit(0); }
    waitpid(pid, &status, 0);
    printf("child signalled: %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : -1);

    /* signal handler */
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    kill(getpid(), SIGUSR1);
    printf("SIGUSR1 handled: %d\n", (int)got_usr1);

    /* threads */
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)100000L);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("threads: counter=%ld\n", counter);

    /* mmap */
    size_t len = 1 << 20;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { perror("mmap"); return 1; }
    unsigned long sum = 0;
    for (size_t i = 0; i < len; i++) m[i] = (unsigned char)i;
    for (size_t i = 0; i < len; i++) sum += m[i];
    munmap(m, len);
    printf("mmap sum: %lu\n", sum);

    /* time goes forward */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    usleep(10000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long ns = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
    printf("slept at least 10ms: %d\n", ns >= 10000000L);

    /* errno from a failing call */
    errno = 0;
    int r = open("/nonexistent/file", O_RDONLY);
    printf("open missing: %d %s\n", r, strerror(errno));

    fflush(stdout);
    fprintf(stderr, "to stderr\n");
    return 5;
}
