#pragma once
// What the schema validator needs from JSON literals, read straight from the document text
// without buffers, allocation or floating point: the code points of a string body (counted,
// compared, checked as a name or path) and the exact value of a number literal (ordered and
// tested for integrality at any magnitude). Internal to mcp/schema.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mcp::schema {

// Code points of a raw (still escaped) JSON string body, decoded one at a time. The JSON reader
// has validated UTF-8, escapes and surrogate pairs; anything malformed anyway yields U+FFFD and
// the walk moves on, so a loop over next() always ends.
class CodePoints {
public:
    explicit CodePoints(std::string_view raw) : m_raw(raw) {}
    bool next(uint32_t& cp); // false at the end

private:
    bool replacement(uint32_t& cp);
    bool utf8(uint8_t lead, uint32_t& cp);
    bool hex4(size_t at, uint32_t& value) const;
    bool unicode_escape(uint32_t& cp);

    std::string_view m_raw;
    size_t m_pos = 0;
};

uint64_t code_point_count(std::string_view raw);
bool same_string(std::string_view raw_a, std::string_view raw_b); // equal once unescaped

// format "name" (path == false): one or more of [A-Za-z0-9._:-], not starting with '.', no "..".
// format "path": names joined by '/': no leading or trailing '/', no empty segment, no segment
// starting with '.' (so no "." or ".." segment), no ".." anywhere. Decided on the decoded
// characters: "\u002e" is a '.'.
bool good_name(std::string_view raw, bool path);

// A JSON number literal as sign × 0.d1d2…dn × 10^point, d1 and dn non-zero (or zero). Exponents
// beyond ±kExponentClamp are clamped; only their sign then matters, and numbers a schema may use
// (schema_number) stay far inside that range, so comparisons with them are exact.
constexpr int64_t kExponentClamp = 1000000000000000; // 10^15
constexpr int64_t kSchemaPointLimit = 1000000000;    // 10^9

struct Decimal {
    bool negative = false;
    bool zero = true;
    std::string_view mantissa; // integer digits, then optionally '.' and fraction digits
    uint32_t int_digits = 0;
    uint32_t first = 0; // the first significant digit, counting digits only
    uint32_t count = 0; // significant digits, from the first to the last non-zero one
    int64_t point = 0;

    char digit(uint32_t k) const { return mantissa[k < int_digits ? k : k + 1]; }
    bool integral() const { return zero || point >= static_cast<int64_t>(count); }
};

std::optional<Decimal> parse_decimal(std::string_view literal);
int compare(const Decimal& a, const Decimal& b); // -1, 0 or 1 as a is below, equal to or above b
bool schema_number(const Decimal& d);            // usable as a bound or an enum member

} // namespace mcp::schema
