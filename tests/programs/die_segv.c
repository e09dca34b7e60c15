// A NULL write with no SIGSEGV handler kills the program (exit status -11).
// cflags: -fno-delete-null-pointer-checks
// status: -11
#include "util.h"

int main(void) {
    printf("writing through NULL\n");
    fflush(stdout);
    volatile int *p = NULL;
    *p = 1;
    printf("not reached\n");
    return 0;
}
