// threads_many.c built as a static executable.
// cflags: -static -pthread
#include "threads_many.c"
