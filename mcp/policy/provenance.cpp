#include "provenance.h"
#include <ktl/decimal.h>

namespace mcp {

const char* integrity_name(Integrity integrity) { return integrity == Integrity::Trusted ? "TRUSTED" : "UNTRUSTED"; }

size_t format_provenance_id(uint64_t id, char (&out)[kProvenanceIdText]) {
    if (id == 0) {
        out[0] = '\0';
        return 0;
    }
    size_t n = 0;
    const uint32_t tag = provenance_boot(id);
    for (int shift = 28; shift >= 0; shift -= 4)
        out[n++] = "0123456789abcdef"[(tag >> shift) & 0xf];
    out[n++] = '-';
    char digits[20];
    for (char c : ktl::format_decimal(provenance_number(id), digits))
        out[n++] = c;
    out[n] = '\0';
    return n;
}

std::optional<uint64_t> parse_provenance_id(std::string_view text) {
    if (text.size() < 10 || text.size() > 19 || text[8] != '-')
        return std::nullopt;
    uint32_t tag = 0;
    for (size_t i = 0; i < 8; ++i) {
        char c = text[i];
        uint32_t v = c >= '0' && c <= '9' ? uint32_t(c - '0') : c >= 'a' && c <= 'f' ? uint32_t(c - 'a' + 10) : 16;
        if (v == 16)
            return std::nullopt;
        tag = (tag << 4) | v;
    }
    std::string_view digits = text.substr(9);
    if (digits[0] == '0')
        return std::nullopt; // no leading zeros, and number 0 is no node
    uint64_t number = 0;
    for (char c : digits) {
        if (c < '0' || c > '9')
            return std::nullopt;
        number = number * 10 + uint64_t(c - '0');
        if (number > 0xffffffffull)
            return std::nullopt;
    }
    if (tag == 0)
        return std::nullopt;
    return make_provenance_id(tag, static_cast<uint32_t>(number));
}

} // namespace mcp
