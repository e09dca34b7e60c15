//! Memory: mmap, mprotect, munmap, brk, madvise, mremap.

use super::{check, NOMEM};
use crate::nr::*;

/// `ls` (ld.so and malloc) and
/// ```c
/// void *p = mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
/// mprotect(p, 4096, PROT_NONE);
/// mmap(p, 4096, PROT_READ|PROT_EXEC, MAP_SHARED|MAP_FIXED|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0);
/// mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_POPULATE|MAP_STACK|MAP_GROWSDOWN, 99, 4096);
/// munmap(p, 8192);
/// madvise(p, 4096, MADV_DONTNEED);
/// sbrk(0);
/// ```
#[test]
fn mappings() {
    check(
        MMAP,
        [0, 8192, 3, 0x22, u32::MAX as u64, 0],
        0x7f9c_13d7_d000,
        NOMEM,
        "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f9c13d7d000",
    );
    check(
        MMAP,
        [0x7fab_bf71_f000, 110592, 5, 0x812, 3, 0x7000],
        0x7fab_bf71_f000,
        NOMEM,
        "mmap(0x7fabbf71f000, 110592, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x7000) = 0x7fabbf71f000",
    );
    check(
        MPROTECT,
        [0x7f9c_13d7_d000, 4096, 0, 0, 0, 0],
        0,
        NOMEM,
        "mprotect(0x7f9c13d7d000, 4096, PROT_NONE) = 0",
    );
    check(
        MMAP,
        [0x7f9c_13d7_d000, 4096, 5, 0x4031, u32::MAX as u64, 0],
        0x7f9c_13d7_d000,
        NOMEM,
        "mmap(0x7f9c13d7d000, 4096, PROT_READ|PROT_EXEC, MAP_SHARED|MAP_FIXED|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0) = \
         0x7f9c13d7d000",
    );
    check(
        MMAP,
        [0, 4096, 1, 0x28102, 99, 4096],
        -9,
        NOMEM,
        "mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_POPULATE|MAP_GROWSDOWN|MAP_STACK, 99, 0x1000) = -1 EBADF (Bad file \
         descriptor)",
    );
    check(
        MUNMAP,
        [0x7f9c_13d7_d000, 8192, 0, 0, 0, 0],
        0,
        NOMEM,
        "munmap(0x7f9c13d7d000, 8192)      = 0",
    );
    check(
        MADVISE,
        [0x7f9c_13d7_d000, 4096, 4, 0, 0, 0],
        -12,
        NOMEM,
        "madvise(0x7f9c13d7d000, 4096, MADV_DONTNEED) = -1 ENOMEM (Cannot allocate memory)",
    );
    check(
        BRK,
        [0; 6],
        0x55b8_3462_1000,
        NOMEM,
        "brk(NULL)                         = 0x55b834621000",
    );
    check(
        BRK,
        [0x55ef_bf0e_6000, 0, 0, 0, 0, 0],
        0x55ef_bf0e_6000,
        NOMEM,
        "brk(0x55efbf0e6000)               = 0x55efbf0e6000",
    );
    // From the test program in tests/against_strace.rs.
    check(
        MREMAP,
        [0x7fb2_7903_f000, 8192, 16384, 1, 0, 0],
        -14,
        NOMEM,
        "mremap(0x7fb27903f000, 8192, 16384, MREMAP_MAYMOVE) = -1 EFAULT (Bad address)",
    );
}
