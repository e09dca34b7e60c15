// Exits with the status given as argv[1] (through exit(), _exit() or a
// return from main, chosen by argv[2]), after printing it.
// args: 0 => 0
// args: 1 => 1
// args: 42 _exit => 42
// args: 255 return => 255
// args: 256 => 0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int st = atoi(argv[1]);
    const char *how = argc > 2 ? argv[2] : "exit";
    printf("exiting with %d via %s\n", st, how);
    fflush(stdout);
    if (strcmp(how, "_exit") == 0) _exit(st);
    if (strcmp(how, "return") == 0) return st;
    exit(st);
}
