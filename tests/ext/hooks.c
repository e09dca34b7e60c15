/* hooks: a test extension in the hook form of ABI 1.1 (before/after instead of
 * call). It sees getppid and execve (whose exec_commit reports the call it is
 * given: the layer's view). Arguments: a one-letter tag, then optional
 * letters: 's' serves getppid with 77 in `before` (the layers below and the
 * kernel never see it), 'a' adds 1000 to the result in `after`. Every hook
 * writes one line to strata's standard error: "hooks TAG before|after VALUE",
 * so a test can check their order, what each sees, and that the cookie
 * `before` leaves reaches `after` for the same call ("cookie ok"). */
#include "strata.h"

#define NR_GETPPID 110
#define NR_EXECVE 59

struct inst {
    const strata_host *host;
    uint8_t tag;
    int serve;
    int add;
};

static struct inst insts[16];
static unsigned ninst;

static void say(const struct inst *in, const char *what, int64_t v, int cookie_ok)
{
    uint8_t line[96];
    size_t n = 0;
    const char *head = "hooks ";
    for (size_t i = 0; head[i]; i++)
        line[n++] = (uint8_t)head[i];
    line[n++] = in->tag;
    line[n++] = ' ';
    for (size_t i = 0; what[i]; i++)
        line[n++] = (uint8_t)what[i];
    line[n++] = ' ';
    uint8_t digits[24];
    size_t d = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        digits[d++] = (uint8_t)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        line[n++] = '-';
    while (d)
        line[n++] = digits[--d];
    const char *tail = cookie_ok ? " cookie ok\n" : "\n";
    for (size_t i = 0; tail[i]; i++)
        line[n++] = (uint8_t)tail[i];
    in->host->emit(1, line, n);
}

static void hooks_exec_commit(void *state, const strata_call *call)
{
    say(state, "exec_commit", (int64_t)call->nr, 0);
}

static int64_t hooks_before(void *state, const strata_call *call, uint64_t *cookie)
{
    const struct inst *in = state;
    if (call->nr == NR_EXECVE)
        return STRATA_CONTINUE;
    say(in, "before", (int64_t)call->nr, 0);
    *cookie = 0xc0ffee00u + in->tag;
    return in->serve ? 77 : STRATA_CONTINUE;
}

static int64_t hooks_after(void *state, const strata_call *call, int64_t ret, uint64_t cookie)
{
    const struct inst *in = state;
    if (call->nr == NR_EXECVE)
        return ret;
    say(in, "after", ret, cookie == 0xc0ffee00u + in->tag);
    return in->add ? ret + 1000 : ret;
}

__attribute__((visibility("default"))) uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;

__attribute__((visibility("default"))) int strata_ext_init(const strata_host *host, const uint8_t *args, size_t len,
                                                           strata_ext_desc *out, uint8_t *err, size_t errlen)
{
    if (len == 0 || ninst >= sizeof insts / sizeof insts[0]) {
        const char *msg = "hooks: give a tag letter";
        size_t i = 0;
        for (; msg[i] && i + 1 < errlen; i++)
            err[i] = (uint8_t)msg[i];
        if (errlen)
            err[i] = 0;
        return 1;
    }
    struct inst *in = &insts[ninst++];
    in->host = host;
    in->tag = args[0];
    for (size_t i = 1; i < len; i++) {
        in->serve |= args[i] == 's';
        in->add |= args[i] == 'a';
    }
    out->abi_version = STRATA_ABI_VERSION;
    out->size = sizeof *out;
    out->name = (const uint8_t *)"hooks";
    out->state = in;
    for (size_t w = 0; w < STRATA_MAX_NR / 64; w++)
        out->interest.bits[w] = 0;
    strata_interest_add(&out->interest, NR_GETPPID);
    strata_interest_add(&out->interest, NR_EXECVE);
    out->call = 0;
    out->exec_commit = hooks_exec_commit;
    out->task_start = 0;
    out->exit = 0;
    out->signal = 0;
    out->before = hooks_before;
    out->after = hooks_after;
    return 0;
}
