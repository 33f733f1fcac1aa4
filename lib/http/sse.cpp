// Server-Sent Events framing: WHATWG HTML "Server-sent events", the event stream format.
#include "response.h"

namespace http {

using namespace detail;

namespace {

bool single_line(std::string_view s) { return s.find_first_of("\r\n") == std::string_view::npos; }

// "name: value\n"; an empty value is written "name:" (the space would be stripped anyway).
void put_field(OutBuffer& out, std::string_view name, std::string_view value) {
    out.put(name);
    out.put(value.empty() ? ":" : ": ");
    out.put(value);
    out.put("\n");
}

} // namespace

size_t write_sse_event(std::span<char> out, std::string_view event, std::string_view id, std::string_view data) {
    if (!single_line(event) || !single_line(id) || id.find('\0') != std::string_view::npos)
        return 0;
    OutBuffer buf(out);
    if (!event.empty())
        put_field(buf, "event", event);
    if (!id.empty())
        put_field(buf, "id", id);
    // The stream format ends a line at CRLF, CR or LF; each piece of data between them is
    // its own data field. The loop consumes at least one byte per pass until the last line.
    size_t start = 0;
    for (;;) {
        size_t end = data.find_first_of("\r\n", start);
        put_field(buf, "data", data.substr(start, end == std::string_view::npos ? end : end - start));
        if (end == std::string_view::npos)
            break;
        start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
    }
    buf.put("\n");
    return buf.full() ? 0 : buf.size();
}

size_t write_sse_comment(std::span<char> out, std::string_view text) {
    if (!single_line(text))
        return 0;
    OutBuffer buf(out);
    buf.put(text.empty() ? ":" : ": ");
    buf.put(text);
    buf.put("\n\n");
    return buf.full() ? 0 : buf.size();
}

} // namespace http
