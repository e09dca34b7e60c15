// A misbehaving extension object, for the fail-closed tests: with args
// "segv" it dereferences NULL on the first getppid, with "fail" it reports
// a failure through strata, with "ok" it passes everything on, with "nsys"
// it suppresses every SIGSYS strata delivers (the signal upcall).
// cc -O2 -fPIC -shared -nostdlib -ffreestanding -fno-stack-protector -fvisibility=hidden -I include
#include "strata.h"

__attribute__((visibility("default"))) uint32_t strata_ext_abi_version = STRATA_ABI_VERSION;

static const strata_host *H;
static int mode;

static int64_t call(void *state, strata_call *c, const strata_below *below) {
    (void)state;
    if (c->nr == 110 /* getppid */) {
        if (mode == 1) return *(volatile int64_t *)0;
        if (mode == 2) H->fail((const uint8_t *)"refusing on purpose", 19);
    }
    return below->call(below, c);
}

static int32_t signal(void *state, int32_t sig, const uint8_t *info) {
    (void)state;
    (void)info;
    return mode == 3 && sig == 31 ? 1 : 0;
}

__attribute__((visibility("default"))) int strata_ext_init(const strata_host *host, const uint8_t *args, size_t len,
                                                         strata_ext_desc *out, uint8_t *err, size_t errlen) {
    (void)err; (void)errlen;
    H = host;
    mode = (len == 4 && args[0] == 's') ? 1 : (len == 4 && args[0] == 'f') ? 2 : (len == 4 && args[0] == 'n') ? 3 : 0;
    out->abi_version = STRATA_ABI_VERSION;
    out->size = sizeof *out;
    out->name = (const uint8_t *)"faulty";
    out->state = 0;
    for (int i = 0; i < 8; i++) out->interest.bits[i] = 0;
    strata_interest_add(&out->interest, 110);
    out->call = call;
    out->exec_commit = 0;
    out->task_start = 0;
    out->exit = 0;
    out->signal = signal;
    return 0;
}
