#include "envelope.h"

namespace mcp {

void write_envelope(json::Writer& w, ErrorCode code, std::string_view message, std::string_view request_id,
                    std::string_view timestamp, std::initializer_list<Detail> details) {
    w.begin_object();
    write_envelope_members(w, code, message, request_id, timestamp, details);
    w.end_object();
}

void write_envelope_members(json::Writer& w, ErrorCode code, std::string_view message, std::string_view request_id,
                            std::string_view timestamp, std::initializer_list<Detail> details) {
    w.key("ok").boolean(false);
    w.key("error").begin_object();
    w.key("code").string(error_code_name(code));
    w.key("message").string(message);
    w.key("details");
    if (details.size() == 0) {
        w.null();
    } else {
        w.begin_object();
        for (const auto& d : details) {
            if (d.number)
                w.key(d.key).raw(d.value);
            else
                w.key(d.key).string(d.value);
        }
        w.end_object();
    }
    w.end_object();
    w.key("request_id").string(request_id);
    w.key("timestamp").string(timestamp);
}

} // namespace mcp
