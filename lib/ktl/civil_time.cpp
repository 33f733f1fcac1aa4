#include "civil_time.h"

namespace ktl {

static void put_digits(char* out, uint32_t value, int width) {
    for (int i = width - 1; i >= 0; --i) {
        out[i] = static_cast<char>('0' + value % 10);
        value /= 10;
    }
}

bool format_rfc3339(int64_t unix_seconds, char* out, size_t cap) {
    if (cap < kRfc3339Len + 1) {
        if (cap > 0)
            out[0] = '\0';
        return false;
    }
    CivilTime t = civil_from_unix(unix_seconds);
    if (t.year < 0 || t.year > 9999) {
        const char* bad = "invalid";
        size_t i = 0;
        for (; bad[i]; ++i)
            out[i] = bad[i];
        out[i] = '\0';
        return false;
    }
    put_digits(out, static_cast<uint32_t>(t.year), 4);
    out[4] = '-';
    put_digits(out + 5, t.month, 2);
    out[7] = '-';
    put_digits(out + 8, t.day, 2);
    out[10] = 'T';
    put_digits(out + 11, t.hour, 2);
    out[13] = ':';
    put_digits(out + 14, t.minute, 2);
    out[16] = ':';
    put_digits(out + 17, t.second, 2);
    out[19] = 'Z';
    out[20] = '\0';
    return true;
}

} // namespace ktl
