/* hide: a strata extension in C that makes every path under a prefix look
 * absent. Opening, stat-ing, access-checking or reading the link of a path
 * that starts with PREFIX fails with ENOENT without reaching the kernel;
 * every other call goes down unchanged.
 *
 * Build (from the repository root; no libc, no start files):
 *
 *   cc -O2 -fPIC -shared -nostdlib -ffreestanding -fno-stack-protector -fvisibility=hidden -I include -o libhide.so examples/c-ext/hide.c
 *
 * Use:  strata run --ext ./libhide.so:/etc/secret -- cat /etc/secret/key
 *
 * The match is on the path text as the program passed it: a relative path,
 * or one that reaches the prefix through "..", a symbolic link or a
 * directory handle, is not hidden. The extension only uses include/strata.h
 * (which includes <stdint.h> and <stddef.h>) and calls no libc function.
 */
#include "strata.h"

#define ENOENT 2

/* PATH_MAX, with its NUL. */
#define PATH_CAP 4096
#define PAGE_SIZE 4096

/* Built once by strata_ext_init, before the program runs; only read after. */
static struct {
    const strata_host *host;
    uint8_t prefix[PATH_CAP];
    size_t len;
} hide;

/* Reads the NUL-terminated string at program address addr into buf (cap
 * bytes, NUL included), a page at a time so that a string ending just before
 * an unmapped page reads fine. Returns its length, or -1 when it cannot be
 * read or does not fit. */
static int64_t read_path(uint64_t addr, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    if (addr == 0)
        return -1;
    while (len < cap) {
        size_t want = PAGE_SIZE - (size_t)((addr + len) % PAGE_SIZE);
        if (want > cap - len)
            want = cap - len;
        int64_t n = hide.host->read_mem(addr + len, buf + len, want);
        if (n <= 0)
            return -1;
        for (size_t i = len; i < len + (size_t)n; i++)
            if (buf[i] == 0)
                return (int64_t)i;
        len += (size_t)n;
        if ((size_t)n < want)
            return -1;
    }
    return -1;
}

/* Whether path operand 0 of call starts with the prefix. */
static int hidden(const strata_call *call)
{
    uint8_t path[PATH_CAP];
    if (call->npaths < 1 || call->paths[0].arg >= 6)
        return 0;
    int64_t len = read_path(call->args[call->paths[0].arg], path, sizeof path);
    if (len < 0 || (size_t)len < hide.len)
        return 0;
    for (size_t i = 0; i < hide.len; i++)
        if (path[i] != hide.prefix[i])
            return 0;
    return 1;
}

static int64_t hide_call(void *state, strata_call *call, const strata_below *below)
{
    (void)state;
    if ((call->op == STRATA_OP_STREAM_OPEN || call->op == STRATA_OP_STREAM_ATTR_BY_NAME) && hidden(call))
        return -ENOENT;
    return below->call(below, call);
}

/* Copies the NUL-terminated msg into err (err_len bytes) and returns 1. */
static int fail_init(uint8_t *err, size_t err_len, const char *msg)
{
    size_t i = 0;
    if (err_len == 0)
        return 1;
    for (; msg[i] != 0 && i + 1 < err_len; i++)
        err[i] = (uint8_t)msg[i];
    err[i] = 0;
    return 1;
}

__attribute__((visibility("default"))) uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;

__attribute__((visibility("default"))) int strata_ext_init(const strata_host *host, const uint8_t *args, size_t len,
                                                           strata_ext_desc *out, uint8_t *err, size_t errlen)
{
    /* The Linux calls decoded into STRATA_OP_STREAM_OPEN and
     * STRATA_OP_STREAM_ATTR_BY_NAME that have a path operand (docs/abi.md):
     * open creat openat openat2, stat lstat newfstatat statx access
     * faccessat faccessat2 readlink readlinkat. */
    static const uint16_t calls[] = {2, 85, 257, 437, 4, 6, 262, 332, 21, 269, 439, 89, 267};

    if (len == 0)
        return fail_init(err, errlen, "hide: give the path prefix to hide, e.g. --ext ./libhide.so:/etc/secret");
    if (len >= sizeof hide.prefix)
        return fail_init(err, errlen, "hide: the path prefix is longer than PATH_MAX");
    for (size_t i = 0; i < len; i++) {
        if (args[i] == 0)
            return fail_init(err, errlen, "hide: the path prefix contains a NUL byte");
        hide.prefix[i] = args[i];
    }
    hide.prefix[len] = 0;
    hide.len = len;
    hide.host = host;

    out->abi_version = STRATA_ABI_VERSION;
    out->size = sizeof *out;
    out->name = (const uint8_t *)"hide";
    out->state = 0;
    for (size_t w = 0; w < STRATA_MAX_NR / 64; w++)
        out->interest.bits[w] = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        strata_interest_add(&out->interest, calls[i]);
    out->call = hide_call;
    out->exec_commit = 0;
    out->task_start = 0;
    out->exit = 0;
    out->signal = 0;
    return 0;
}

/* strata_ext_init has the type strata loads it as. */
_Static_assert(_Generic(&strata_ext_init, strata_ext_init_fn: 1, default: 0), "strata_ext_init: wrong type");
