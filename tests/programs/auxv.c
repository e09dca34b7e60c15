// The auxiliary vector describes the program, not a loader: AT_PAGESZ 4096;
// AT_EXECFN is the path given to execve (argv[0] here); AT_PHDR/AT_PHNUM/
// AT_PHENT match the main object reported by dl_iterate_phdr and its
// PT_PHDR; AT_ENTRY is _start; AT_BASE is the dynamic linker's load address
// (0 for static executables); AT_SYSINFO_EHDR is a mapped ELF image (the
// vDSO); AT_RANDOM points at 16 readable bytes; AT_UID/EUID/GID/EGID match;
// AT_SECURE is 0; AT_PLATFORM is "x86_64"; AT_CLKTCK is 100. Also getcwd
// and /proc/self/exe.
// as-nobody
#define _GNU_SOURCE
#include "util.h"
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <sys/auxv.h>

extern char _start[];

struct found {
    const ElfW(Phdr) *main_phdr;
    int main_phnum;
    ElfW(Addr) main_addr, interp_addr, vdso_addr;
    int have_interp, have_vdso;
};

static int cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct found *f = data;
    if (f->main_phdr == NULL) {
        f->main_phdr = info->dlpi_phdr;
        f->main_phnum = info->dlpi_phnum;
        f->main_addr = info->dlpi_addr;
    } else if (strstr(info->dlpi_name, "ld-linux")) {
        f->have_interp = 1;
        f->interp_addr = info->dlpi_addr;
    } else if (strstr(info->dlpi_name, "vdso")) {
        f->have_vdso = 1;
        f->vdso_addr = info->dlpi_addr;
    }
    return 0;
}

int main(int argc, char **argv) {
    (void)argc;
    printf("AT_PAGESZ %lu\n", getauxval(AT_PAGESZ));
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    printf("AT_EXECFN equals argv[0]: %d\n", execfn != NULL && strcmp(execfn, argv[0]) == 0);

    struct found f = {0};
    dl_iterate_phdr(cb, &f);
    const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    printf("AT_PHDR matches dl_iterate_phdr: %d\n", phdr == f.main_phdr);
    printf("AT_PHNUM matches: %d, AT_PHENT %lu\n", (int)getauxval(AT_PHNUM) == f.main_phnum, getauxval(AT_PHENT));
    int has_pt_phdr = 0, phdr_ok = 0;
    for (int i = 0; i < f.main_phnum; i++)
        if (phdr[i].p_type == PT_PHDR) {
            has_pt_phdr = 1;
            phdr_ok = (const void *)(f.main_addr + phdr[i].p_vaddr) == (const void *)phdr;
        }
    printf("has PT_PHDR: %d, load bias + its p_vaddr is AT_PHDR: %d\n", has_pt_phdr, phdr_ok);
    printf("AT_ENTRY is _start: %d\n", getauxval(AT_ENTRY) == (unsigned long)_start);
    unsigned long base = getauxval(AT_BASE);
    if (f.have_interp)
        printf("AT_BASE is the dynamic linker's address: %d\n", base == f.interp_addr);
    else
        printf("AT_BASE is 0 without a dynamic linker: %d\n", base == 0);

    const unsigned char *vdso = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    printf("AT_SYSINFO_EHDR non-null: %d, ELF magic: %d\n", vdso != NULL, vdso && memcmp(vdso, ELFMAG, SELFMAG) == 0);
    if (f.have_vdso) printf("vDSO seen by dl_iterate_phdr at AT_SYSINFO_EHDR: %d\n", f.vdso_addr == (ElfW(Addr))vdso);

    const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
    unsigned x = 0;
    for (int i = 0; rnd && i < 16; i++) x |= rnd[i];
    printf("AT_RANDOM non-null: %d, 16 bytes readable: %d\n", rnd != NULL, rnd != NULL && (x | 1));

    printf("AT_UID/EUID/GID/EGID match: %d %d %d %d\n", getauxval(AT_UID) == getuid(), getauxval(AT_EUID) == geteuid(),
           getauxval(AT_GID) == getgid(), getauxval(AT_EGID) == getegid());
    printf("AT_SECURE %lu\n", getauxval(AT_SECURE));
    const char *plat = (const char *)getauxval(AT_PLATFORM);
    printf("AT_PLATFORM %s\n", plat ? plat : "(none)");
    printf("AT_CLKTCK %lu\n", getauxval(AT_CLKTCK));
    printf("AT_HWCAP non-zero: %d\n", getauxval(AT_HWCAP) != 0);

    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    printf("getcwd %s\n", cwd);
    char exe[PATH_MAX], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(n > 0);
    exe[n] = 0;
    CHECK(realpath(argv[0], real) != NULL);
    printf("/proc/self/exe is realpath(argv[0]): %d\n", strcmp(exe, real) == 0);
    return 0;
}
