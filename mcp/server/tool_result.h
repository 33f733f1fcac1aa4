#pragma once
// Inside the dispatcher (not an interface): how a tools/call result is written, shared by the
// inline and the deferred answers and by the pipeline's argument refusal.
#include "dispatch.h"

#include <ktl/format.h>

namespace mcp {

// A failed call's members: what the model reads as text, and the envelope for code under
// _meta["io.basalt/error"]. Never as structuredContent: the spec has structuredContent conform
// to the tool's outputSchema, which describes success, and clients check it even on errors (the
// TypeScript SDK's Client.callTool() throws its own -32602 when it does not conform), so an
// envelope there would hide the failure from the agent. One place for every tool, with or
// without an output schema.
inline void write_error_members(json::Writer& w, std::string_view text, std::string_view envelope) {
    w.key("content").begin_array().begin_object().key("type").string("text").key("text").string(text);
    w.end_object().end_array();
    w.key("isError").boolean(true);
    w.key("_meta").begin_object().key(kErrorMetaKey).raw(envelope).end_object();
}

// {"jsonrpc","id","result":{content, structuredContent, isError}}; failures carry the envelope
// (write_error_members). A Content tool's output is the content array itself.
template <typename Begin>
inline void write_tool_result(json::Writer& w, Begin&& begin, bool modern, ToolResult kind, bool ok,
                              std::string_view structured, const ToolError& err, std::string_view request_id,
                              std::string_view timestamp) {
    begin(w);
    w.key("result").begin_object();
    if (modern)
        w.key("resultType").string("complete");
    if (ok && kind == ToolResult::Content) {
        w.key("content").raw(structured);
        w.key("isError").boolean(false);
    } else if (ok) {
        w.key("content").begin_array().begin_object().key("type").string("text").key("text").string(structured);
        w.end_object().end_array();
        w.key("structuredContent").raw(structured);
        w.key("isError").boolean(false);
    } else {
        char envelope[1024];
        json::Writer ew(envelope);
        char proposal[12];
        ktl::Formatter(proposal, sizeof proposal).append("%u", static_cast<unsigned>(err.proposal_id));
        char retry[12], replayed[24];
        ktl::Formatter(retry, sizeof retry).append("%u", static_cast<unsigned>(err.retry_after_ms));
        ktl::Formatter(replayed, sizeof replayed).append("%lld", static_cast<long long>(err.replayed_so_far));
        if (err.reason && err.retry_after_ms && err.replayed_so_far >= 0)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason },
                             { "retry_after_ms", retry, true },
                             { "replayed_so_far", replayed, true } });
        else if (err.reason && err.retry_after_ms)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason }, { "retry_after_ms", retry, true } });
        else if (err.reason && err.proposal_id)
            write_envelope(ew, err.code, err.message, request_id, timestamp,
                           { { "reason", err.reason }, { "proposal_id", proposal } });
        else if (err.reason)
            write_envelope(ew, err.code, err.message, request_id, timestamp, { { "reason", err.reason } });
        else
            write_envelope(ew, err.code, err.message, request_id, timestamp);
        write_error_members(w, ew.view(), ew.view());
    }
    w.end_object().end_object();
}

// A structured result is an object, a Content result an array (the writer made either well formed).
inline bool well_shaped(ToolResult kind, std::string_view out) {
    return !out.empty() && out[0] == (kind == ToolResult::Content ? '[' : '{');
}

// {"jsonrpc":"2.0","id":<the deferred call's id, as the client wrote it>
inline void begin_call_reply(json::Writer& w, const PendingCall& call) {
    w.begin_object().key("jsonrpc").string("2.0").key("id");
    if (call.id_is_string)
        w.raw_string({ call.id, call.id_len });
    else
        w.raw({ call.id, call.id_len });
}
} // namespace mcp
