// hello.c built as a static PIE.
// cflags: -static-pie
#include "hello.c"
