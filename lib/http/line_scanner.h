#pragma once
// Finds one line of a request head in a buffer that may still be growing. Internal to lib/http.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace http::detail {

enum class Scan : uint8_t { Found, NeedMore, TooLong, HeadTooLarge };

struct Line {
    std::string_view content; // without its LF or CRLF
    size_t next = 0;          // offset just past the LF
};

// The line starting at data[pos]. TooLong: its content passes content_limit bytes;
// HeadTooLarge: it cannot end (through its LF) by offset head_limit. Either is reported as soon
// as the bytes at hand prove it, and whichever limit is crossed at the earlier byte wins, so a
// prefix of the data never gives a different verdict than the whole.
Scan scan_line(std::string_view data, size_t pos, size_t content_limit, size_t head_limit, Line& line);

} // namespace http::detail
