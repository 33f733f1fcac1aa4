#pragma once
// Response and Server-Sent Events framing into caller buffers (no allocation).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <http/out_buffer.h>

namespace http {

// The reason phrase of a status code ("Not Found"); "" for codes it does not know, which
// RFC 9112 section 4 allows (the phrase is optional, the space before it is not).
const char* status_text(uint16_t status);

// Builds "HTTP/1.1 <code> <text>\r\n", fields, "\r\n", then the body, in that order.
// Send view() only if ok(): overflow() means the buffer was too small, invalid() that a call
// came out of order or would have written a field a client could misread (a CR or LF in a
// value is response splitting). After either, further calls write nothing.
class ResponseWriter {
public:
    explicit ResponseWriter(std::span<char> out) : m_out(out) {}

    ResponseWriter& status(uint16_t code);
    ResponseWriter& header(std::string_view name, std::string_view value);
    ResponseWriter& header(std::string_view name, uint64_t value);
    ResponseWriter& end_head();
    ResponseWriter& body(std::string_view bytes);

    bool overflow() const { return m_out.full(); }
    bool invalid() const { return m_invalid; }
    bool ok() const { return !overflow() && !m_invalid; }
    std::string_view view() const { return m_out.view(); }
    size_t size() const { return m_out.size(); }

private:
    enum class Stage : uint8_t { Status, Fields, Body };
    bool expect(Stage stage);

    detail::OutBuffer m_out;
    Stage m_stage = Stage::Status;
    bool m_invalid = false;
};

// One Server-Sent Event (WHATWG HTML, "Server-sent events", section 9.2.6): "event:" and "id:"
// lines when not empty, then one "data:" line per line of `data` (split at CRLF, CR or LF,
// which a client joins back with LF), then the blank line that dispatches it. Empty data
// still gets a "data:" line, so the event is dispatched (MCP's resumption priming event).
// Returns the bytes written, 0 if they do not fit or `event` or `id` hold a CR or LF (or, for
// `id`, a NUL, which makes clients ignore it).
size_t write_sse_event(std::span<char> out, std::string_view event, std::string_view id, std::string_view data);

// ": text\n\n", a comment clients ignore: keeps idle connections and proxies from timing out.
// 0 if it does not fit or `text` holds a CR or LF.
size_t write_sse_comment(std::span<char> out, std::string_view text);

} // namespace http
