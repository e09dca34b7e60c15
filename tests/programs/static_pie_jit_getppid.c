// jit_getppid.c built as a static PIE; getppid from generated code is counted.
// cflags: -static-pie
// under-count: getppid>=7
#include "jit_getppid.c"
