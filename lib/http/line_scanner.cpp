#include "line_scanner.h"

namespace http::detail {

// RFC 9112 section 2.2: a line ends with CRLF or, tolerated, a bare LF. A CR that is not
// followed by LF stays in the content, where the caller refuses it as a bare CR.
Scan scan_line(std::string_view data, size_t pos, size_t content_limit, size_t head_limit, Line& line) {
    for (size_t k = pos; k < data.size(); ++k) {
        if (k >= head_limit)
            return Scan::HeadTooLarge;
        char c = data[k];
        if (c == '\n') {
            size_t end = (k > pos && data[k - 1] == '\r') ? k - 1 : k;
            line = { data.substr(pos, end - pos), k + 1 };
            return Scan::Found;
        }
        if (k - pos < content_limit)
            continue;
        // One byte past the content limit: too long unless it is the CR of the terminator.
        // Which it is depends on the next byte, so a head limit at that next byte is decided
        // first: it is passed either way, and the verdict must not wait for a byte past it.
        if (c != '\r')
            return Scan::TooLong;
        if (k + 1 >= head_limit)
            return Scan::HeadTooLarge;
        if (k + 1 < data.size() && data[k + 1] != '\n')
            return Scan::TooLong;
    }
    // Unterminated: if the buffer already reaches the head limit, the LF can only come past it.
    return data.size() >= head_limit ? Scan::HeadTooLarge : Scan::NeedMore;
}

} // namespace http::detail
