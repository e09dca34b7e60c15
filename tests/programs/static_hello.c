// hello.c built as a static executable.
// cflags: -static
// as-nobody
#include "hello.c"
