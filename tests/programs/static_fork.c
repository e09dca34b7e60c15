// fork.c built as a static executable.
// cflags: -static
// as-nobody
#include "fork.c"
