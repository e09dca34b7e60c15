// fork.c built as a static PIE.
// cflags: -static-pie
#include "fork.c"
