// An executable MAP_FIXED mapping of libc's text, as ld.so makes it, from
// descriptors the kernel would not map from: O_PATH gives EBADF, and the
// reserved range stays as it was; from a descriptor opened for reading it
// works and holds libc's bytes. (Under strata, where the session has a text
// image of libc, the image is mapped in place of such a mapping: the
// program's descriptor must be asked as the kernel would.)
// as-nobody
#include "util.h"
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>

static int find_libc(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    if (strstr(info->dlpi_name, "libc.so.6")) {
        snprintf(data, 256, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

int main(void) {
    char path[256] = "";
    dl_iterate_phdr(find_libc, path);
    CHECK(path[0] == '/');
    // libc's executable segment: its first PT_LOAD with PF_X, from the file.
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    Elf64_Ehdr eh;
    CHECK(pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh);
    Elf64_Phdr ph[32];
    CHECK(eh.e_phnum <= 32 && pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) > 0);
    off_t off = -1;
    size_t len = 0;
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            off = (off_t)(ph[i].p_offset & ~4095ul);
            len = (ph[i].p_offset + ph[i].p_filesz - (size_t)off + 4095) & ~4095ul;
            break;
        }
    CHECK(off >= 0 && len > 0);
    char *area = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(area != MAP_FAILED);

    int opath = open(path, O_PATH | O_CLOEXEC);
    CHECK(opath >= 0);
    void *p = mmap(area, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, opath, off);
    printf("O_PATH descriptor: %s\n", p == MAP_FAILED ? strerrorname_np(errno) : "mapped");
    unsigned char vec[1];
    printf("the range after: %s\n", mincore(area, 4096, vec) == 0 ? "still mapped" : strerrorname_np(errno));

    p = mmap(area, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, off);
    CHECK(p == area);
    unsigned char want[4];
    CHECK(pread(fd, want, sizeof want, off) == (ssize_t)sizeof want);
    printf("read-only descriptor: mapped, bytes %s\n", memcmp(area, want, sizeof want) == 0 ? "as in the file" : "differ");
    return 0;
}
