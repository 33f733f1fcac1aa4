#include "atags.h"

namespace atags {

// Each tag: u32 size in words (header included), u32 tag, then the data; ATAG_NONE (size 0)
// ends the list. At most 64 tags are walked.
bool is_atag_list(const volatile uint32_t* window, size_t bytes) {
    return window && bytes >= 8 && (window[0] == 2 || window[0] == 5) && window[1] == kCore;
}

long cmdline(const volatile uint32_t* window, size_t bytes, char* out, size_t cap) {
    if (!is_atag_list(window, bytes) || !out || cap == 0)
        return -1;
    const size_t words = bytes / 4;
    size_t at = 0;
    for (int guard = 0; guard < 64; ++guard) {
        if (at + 2 > words)
            return -1;
        const uint32_t size = window[at], tag = window[at + 1];
        if (size == 0)
            return -1; // ATAG_NONE: no command line
        if (size < 2 || size > words - at)
            return -1;
        if (tag == kCmdline) {
            const size_t max = (size - 2) * 4;
            size_t n = 0;
            for (; n < max && n + 1 < cap; ++n) {
                const uint32_t word = window[at + 2 + n / 4];
                const char c = static_cast<char>((word >> (8 * (n % 4))) & 0xff); // little-endian
                if (c == '\0')
                    break;
                out[n] = c;
            }
            out[n] = '\0';
            return static_cast<long>(n);
        }
        at += size;
    }
    return -1;
}

} // namespace atags
