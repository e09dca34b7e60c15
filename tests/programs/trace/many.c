// Many calls, each line different, for tests/test_trace.py's --trace-ring test.
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int fd = open("/dev/null", O_RDONLY);
    for (int i = 0; i < 8000; i++)
        lseek(fd, i, SEEK_SET);
    close(fd);
    printf("many done\n");
    return 0;
}
