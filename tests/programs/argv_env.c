// argv and the environment pass through unchanged: every argument with its
// length (including empty strings, spaces and UTF-8), the whole environment
// (sorted; the harness passes a fixed one, with an empty value and a value
// containing '='), no STRATA_RT variable, and the initial stack layout the
// kernel builds: envp directly after argv's NULL, argument strings stored
// back to back and followed by the environment strings, auxv after envp's
// NULL.
// args: plain '' 'two words' 'ünïcødé ☃' '--flag=value' ''
#include "util.h"
#include <elf.h>
#include <sys/auxv.h>

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv, char **envp) {
    printf("argc=%d\n", argc);
    for (int i = 1; i < argc; i++) printf("argv[%d] len=%zu [%s]\n", i, strlen(argv[i]), argv[i]);
    CHECK(argv[argc] == NULL);

    printf("envp follows argv: %d\n", envp == argv + argc + 1);
    int contiguous = 1;
    for (int i = 0; i + 1 < argc; i++) contiguous &= argv[i + 1] == argv[i] + strlen(argv[i]) + 1;
    printf("argument strings contiguous: %d\n", contiguous);
    if (envp[0]) {
        int env_contiguous = envp[0] == argv[argc - 1] + strlen(argv[argc - 1]) + 1;
        for (int i = 0; envp[i] && envp[i + 1]; i++) env_contiguous &= envp[i + 1] == envp[i] + strlen(envp[i]) + 1;
        printf("environment strings follow them contiguously: %d\n", env_contiguous);
    }
    char **e = envp;
    while (*e) e++;
    Elf64_auxv_t *auxv = (Elf64_auxv_t *)(e + 1);
    int found = 0;
    for (Elf64_auxv_t *a = auxv; a->a_type != AT_NULL; a++)
        if (a->a_type == AT_PAGESZ) found = a->a_un.a_val == getauxval(AT_PAGESZ);
    printf("auxv follows envp (AT_PAGESZ found there): %d\n", found);

    int n = 0;
    while (envp[n]) n++;
    char **sorted = calloc((size_t)n + 1, sizeof *sorted);
    CHECK(sorted != NULL);
    memcpy(sorted, envp, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp);
    printf("%d environment variables:\n", n);
    for (int i = 0; i < n; i++) printf("  %s\n", sorted[i]);
    printf("STRATA_RT visible: %s\n", getenv("STRATA_RT") ? "yes" : "no");
    const char *empty = getenv("STRATA_TEST_EMPTY");
    printf("STRATA_TEST_EMPTY is set and empty: %d\n", empty != NULL && *empty == 0);
    return 0;
}
