#include "response.h"

#include "chars.h"

namespace http {

using namespace detail;

const char* status_text(uint16_t status) {
    switch (status) { // RFC 9110 section 15, plus 429 from RFC 6585
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "";
    }
}

bool ResponseWriter::expect(Stage stage) {
    if (m_stage != stage)
        m_invalid = true;
    return ok();
}

ResponseWriter& ResponseWriter::status(uint16_t code) {
    if (code < 100 || code > 999) // status-code = 3DIGIT
        m_invalid = true;
    if (!expect(Stage::Status))
        return *this;
    m_out.put("HTTP/1.1 ");
    m_out.put_decimal(code);
    m_out.put(" ");
    m_out.put(status_text(code));
    m_out.put("\r\n");
    m_stage = Stage::Fields;
    return *this;
}

ResponseWriter& ResponseWriter::header(std::string_view name, std::string_view value) {
    bool value_ok = true;
    for (char c : value)
        value_ok = value_ok && is_field_char(c);
    if (!is_token(name) || !value_ok)
        m_invalid = true;
    if (!expect(Stage::Fields))
        return *this;
    m_out.put(name);
    m_out.put(": ");
    m_out.put(value);
    m_out.put("\r\n");
    return *this;
}

ResponseWriter& ResponseWriter::header(std::string_view name, uint64_t value) {
    char digits[20];
    OutBuffer text(digits);
    text.put_decimal(value);
    return header(name, text.view());
}

ResponseWriter& ResponseWriter::end_head() {
    if (expect(Stage::Fields)) {
        m_out.put("\r\n");
        m_stage = Stage::Body;
    }
    return *this;
}

ResponseWriter& ResponseWriter::body(std::string_view bytes) {
    if (expect(Stage::Body))
        m_out.put(bytes);
    return *this;
}

} // namespace http
