// brk.c built as a static executable (the heap starts right after .bss).
// cflags: -static
#include "brk.c"
