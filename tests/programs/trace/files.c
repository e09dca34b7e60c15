// File calls for tests/test_trace.py, with ENOENT, EEXIST and EINVAL failures.
// Runs in an empty working directory; every path is relative to it.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
    char buf[64];
    struct stat st;
    int fd;

    mkdir("d", 0755);
    mkdir("d", 0755);                                   /* EEXIST */
    fd = open("d/f", O_WRONLY | O_CREAT | O_EXCL, 0644);
    write(fd, "hello, trace\n", 13);
    close(fd);
    open("d/f", O_WRONLY | O_CREAT | O_EXCL, 0644);     /* EEXIST */
    open("d/missing", O_RDONLY);                         /* ENOENT */
    fd = open("d/f", O_RDONLY);
    read(fd, buf, sizeof buf);
    read(fd, buf, sizeof buf);                           /* 0: end of file */
    fstat(fd, &st);
    close(fd);
    close(fd);                                           /* EBADF */
    stat("d/f", &st);
    stat("d/missing", &st);                              /* ENOENT */
    lstat("d", &st);
    access("d/f", R_OK | W_OK);
    access("d/missing", F_OK);                           /* ENOENT */
    symlink("f", "d/l");
    symlink("f", "d/l");                                 /* EEXIST */
    readlink("d/l", buf, sizeof buf);
    readlink("d/f", buf, sizeof buf);                    /* EINVAL */
    readlink("d/missing", buf, sizeof buf);              /* ENOENT */
    rename("d/f", "d/g");
    rename("d/f", "d/h");                                /* ENOENT */
    unlink("d/g");
    unlink("d/g");                                       /* ENOENT */
    unlink("d/l");
    rmdir("d");
    rmdir("d");                                          /* ENOENT */
    printf("files done\n");
    return 0;
}
