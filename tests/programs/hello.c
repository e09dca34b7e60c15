// Smallest possible check: stdout, stderr and a zero exit status.
// as-nobody
#include <stdio.h>

int main(void) {
    printf("hello, world\n");
    fprintf(stderr, "hello, stderr\n");
    return 0;
}
