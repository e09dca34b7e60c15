// sig_nested.c built as a static executable.
// cflags: -static
#include "sig_nested.c"
