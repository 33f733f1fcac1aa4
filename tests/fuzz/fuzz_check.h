#pragma once
// CHECK for the fuzz targets: an inconsistency aborts, which libFuzzer records as a crash with
// the input that caused it.
#include <cstdio>
#include <cstdlib>

[[noreturn]] inline void fuzz_check_failed(const char* target, const char* what, int line) {
    fprintf(stderr, "%s: check failed at line %d: %s\n", target, line, what);
    abort();
}

#define FUZZ_CHECK(target, cond)                           \
    do {                                                   \
        if (!(cond))                                       \
            fuzz_check_failed(target, #cond, __LINE__);    \
    } while (0)
