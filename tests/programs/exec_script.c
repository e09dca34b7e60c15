// execve of #! scripts: a /bin/sh script with arguments (including an empty
// one), "#!/bin/sh -e" (interpreter plus one argument), "#!/usr/bin/env
// python3" (the argument is the real interpreter), a script whose
// interpreter is another script, and blanks around the #! interpreter.
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;
static char dir[] = "/tmp/strata-script-XXXXXX";

static void make(const char *name, const char *content) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(fd >= 0);
    CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
    CHECK(close(fd) == 0);
}

static void run(const char *name, char *arg1, char *arg2) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *args[] = {path, arg1, arg2, NULL};
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execve(path, args, environ);
        printf("execve %s: %s\n", name, strerror(errno));
        exit(127);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    printf("[%s exited %d]\n", name, WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    make("plain.sh", "#!/bin/sh\necho \"sh: $(basename \"$0\") argc=$# 1=[${1##*/}] 2=[${2##*/}]\"\nexit 3\n");
    make("dash-e.sh", "#!/bin/sh -e\necho \"sh -e: set flags contain e: $(case $- in *e*) echo yes;; *) echo no;; esac)\"\nfalse\necho not reached\n");
    make("py", "#!/usr/bin/env python3\nimport os, sys\nprint('python:', os.path.basename(sys.argv[0]), sys.argv[1:])\nsys.exit(5)\n");
    make("spaces.sh", "#!   /bin/sh   \necho spaces around the interpreter ok\n");
    char inner[300];
    snprintf(inner, sizeof inner, "#!%s/plain.sh\n", dir);
    make("nested", inner);

    run("plain.sh", "first", "");
    run("dash-e.sh", NULL, NULL);
    run("py", "α", "two words");
    run("spaces.sh", NULL, NULL);
    run("nested", "x", NULL);

    const char *names[] = {"plain.sh", "dash-e.sh", "py", "spaces.sh", "nested"};
    for (unsigned i = 0; i < 5; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}
