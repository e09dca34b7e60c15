// A page of generated code: mmap read-write, write `mov $110,%eax; syscall;
// ret` (getppid), mprotect to read-execute, call it 7 times and compare each
// result with getppid(). Under `strata run --ext count` the summary must
// count at least 7 getppid calls (the C library never calls getppid itself).
// under-count: getppid>=7
// as-nobody
#include "util.h"
#include <sys/mman.h>

int main(void) {
    static const unsigned char code[] = {0xb8, 0x6e, 0x00, 0x00, 0x00, /* mov $110, %eax */
                                         0x0f, 0x05,                   /* syscall */
                                         0xc3};                        /* ret */
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    memcpy(page, code, sizeof code);
    CHECK(mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0);
    long (*fn)(void) = (long (*)(void))page;
    long expected = getppid();
    int same = 0;
    for (int i = 0; i < 7; i++) same += fn() == expected;
    printf("generated getppid matched getppid() %d/7 times\n", same);
    CHECK(same == 7);
    CHECK(munmap(page, 4096) == 0);
    return 0;
}
