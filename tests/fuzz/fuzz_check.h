#pragma once
// CHECK for the fuzz targets: an inconsistency aborts, which libFuzzer records as a crash with
// the input that caused it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

[[noreturn]] inline void fuzz_check_failed(const char* target, const char* what, int line) {
    fprintf(stderr, "%s: check failed at line %d: %s\n", target, line, what);
    abort();
}

#define FUZZ_CHECK(target, cond) \
    do { \
        if (!(cond)) \
            fuzz_check_failed(target, #cond, __LINE__); \
    } while (0)

// FNV-1a of an input: limits and split points drawn from it, the same on every replay.
inline uint64_t fuzz_hash(std::string_view text) {
    uint64_t h = 14695981039346656037ull;
    for (char c : text)
        h = (h ^ uint8_t(c)) * 1099511628211ull;
    return h;
}
