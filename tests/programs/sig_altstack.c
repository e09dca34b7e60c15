// sigaltstack and SA_ONSTACK: the handler's locals live inside the alternate
// stack, sigaltstack queried inside the handler reports SS_ONSTACK, changing
// the alternate stack while running on it fails with EPERM, the stack is not
// used without SA_ONSTACK, SS_DISABLE works outside a handler, and a stack
// smaller than MINSIGSTKSZ is refused with ENOMEM.
// as-nobody
#include "util.h"
#include <signal.h>
#include <stdint.h>

static char *alt;
static size_t alt_size = 1 << 16;
static volatile int on_alt, flags_in_handler, change_errno, ran;

static void handler(int sig) {
    (void)sig;
    volatile char local;
    uintptr_t a = (uintptr_t)&local;
    on_alt = a >= (uintptr_t)alt && a < (uintptr_t)alt + alt_size;
    stack_t cur;
    CHECK(sigaltstack(NULL, &cur) == 0);
    flags_in_handler = cur.ss_flags;
    stack_t other = {.ss_sp = alt, .ss_size = alt_size, .ss_flags = 0};
    errno = 0;
    change_errno = sigaltstack(&other, NULL) == 0 ? 0 : errno;
    ran++;
}

int main(void) {
    alt = malloc(alt_size);
    CHECK(alt != NULL);

    stack_t st = {.ss_sp = alt, .ss_size = 1024, .ss_flags = 0};
    errno = 0;
    CHECK(sigaltstack(&st, NULL) == -1);
    printf("tiny alternate stack: %s\n", strerrorname_np(errno));

    stack_t old;
    CHECK(sigaltstack(NULL, &old) == 0);
    printf("initially: SS_DISABLE=%d\n", (old.ss_flags & SS_DISABLE) != 0);

    st.ss_size = alt_size;
    CHECK(sigaltstack(&st, NULL) == 0);
    CHECK(sigaltstack(NULL, &old) == 0);
    printf("installed: flags=%d size_ok=%d sp_ok=%d\n", old.ss_flags, old.ss_size == alt_size, old.ss_sp == alt);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    raise(SIGUSR1);
    printf("SA_ONSTACK: ran=%d local on alt stack=%d SS_ONSTACK=%d change while on it: %s\n", ran, on_alt,
           (flags_in_handler & SS_ONSTACK) != 0, change_errno ? strerrorname_np(change_errno) : "ok");
    CHECK(on_alt && (flags_in_handler & SS_ONSTACK) && change_errno == EPERM);

    CHECK(sigaltstack(NULL, &old) == 0);
    printf("after the handler: flags=%d\n", old.ss_flags);

    sa.sa_flags = 0;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    raise(SIGUSR2);
    printf("without SA_ONSTACK: local on alt stack=%d SS_ONSTACK=%d change: %s\n", on_alt,
           (flags_in_handler & SS_ONSTACK) != 0, change_errno ? strerrorname_np(change_errno) : "ok");
    CHECK(!on_alt && change_errno == 0);

    st.ss_flags = SS_DISABLE;
    CHECK(sigaltstack(&st, NULL) == 0);
    CHECK(sigaltstack(NULL, &old) == 0);
    printf("disabled: SS_DISABLE=%d\n", (old.ss_flags & SS_DISABLE) != 0);
    raise(SIGUSR1);
    printf("SA_ONSTACK with the stack disabled: on alt stack=%d\n", on_alt);
    CHECK(!on_alt);
    return 0;
}
