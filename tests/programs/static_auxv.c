// auxv.c built as a static executable (AT_BASE is 0).
// cflags: -static
#include "auxv.c"
