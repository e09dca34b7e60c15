// threads_many.c built as a static PIE.
// cflags: -static-pie -pthread
// as-nobody
#include "threads_many.c"
