// Reads standard input (given by the harness through a pipe) to EOF with
// small reads, upper-cases it (ASCII only) and reports byte and newline
// counts and that stdin is not a terminal.
// stdin: first line\nsecond line with ünïcode\n\nlast line without newline
#include "util.h"
#include <ctype.h>

int main(void) {
    char buf[7];
    ssize_t n;
    size_t bytes = 0, lines = 0;
    while ((n = read(0, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            lines += buf[i] == '\n';
            buf[i] = (char)toupper((unsigned char)buf[i]);
        }
        fwrite(buf, 1, (size_t)n, stdout);
        bytes += (size_t)n;
    }
    CHECK(n == 0);
    printf("\n%zu bytes, %zu newlines, isatty(0)=%d\n", bytes, lines, isatty(0));
    return 0;
}
