// auxv.c built as a static PIE (AT_BASE is 0, AT_PHDR is relocated).
// cflags: -static-pie
#include "auxv.c"
