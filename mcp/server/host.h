#pragma once
// What the dispatcher asks of whoever runs it (the kernel's bridge, a test): the clock, the audit
// trail and provenance, running admitted tool calls and hearing about them (cancellation, the
// client's responses), and room for very large messages. One object per Server, called only from
// the thread that calls Server::handle. Every hook has a default that does nothing: a host
// overrides what it provides.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <json/json.h>
#include <mcp/policy/provenance.h>

namespace mcp {

struct Tool;
struct ToolError;
struct PendingCall;
struct AuditEvent;

class Host {
public:
    // RFC 3339 UTC time for envelopes into out (left as it is when the host has no clock).
    virtual void now_rfc3339(char* out, size_t cap) { (void)out, (void)cap; }
    virtual uint64_t now_ns() { return 0; }

    // Whether decisions are audited (audit() is called) and provenance kept (provenance() is).
    virtual bool audits() const { return false; }
    // False: the record, or the change it records (a tools/call whose tool changed stored data),
    // could not be made durable; an answer that would report that change as done becomes an
    // error instead (finish_call).
    virtual bool audit(const AuditEvent& event) {
        (void)event;
        return true;
    }
    virtual bool keeps_provenance() const { return false; }
    // Keeps a provenance node for an admitted tools/call, resources/read or prompts/get before it
    // is routed or authorised; its id (0: not kept).
    virtual uint64_t provenance(const ProvenanceNode& node) {
        (void)node;
        return 0;
    }

    // Whether admitted tools/calls are the host's to run (start) rather than Tool::run's inline.
    virtual bool runs_calls() const { return false; }
    // True: the host took the call and will answer it with Server::finish_call(); false + err:
    // refused now.
    virtual bool start(const Tool& tool, const json::Value& arguments, const PendingCall& call, ToolError& err);
    // notifications/cancelled for a request id (raw text as in PendingCall::matches) of the
    // session `origin`.
    virtual void cancel(std::string_view raw_id, bool id_is_string, uint32_t origin) {
        (void)raw_id, (void)id_is_string, (void)origin;
    }
    // A JSON-RPC response from the client (to a request a running call sent it: client_request):
    // the id as written, the result's or the error's JSON text, and the session it came from. The
    // host matches it by id AND origin; one that matches nothing is the host's to drop.
    virtual void respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                         uint32_t origin) {
        (void)raw_id, (void)id_is_string, (void)body, (void)is_error, (void)origin;
    }

    // Node arenas for messages with more values than the Server's own arena (Server::kOwnNodes):
    // up to Server::kMaxMessageValues, taken for one message and given back when it is answered
    // (a 500-row JSON vector upsert needs ~50,000). nullptr: such a message is refused (parse
    // error, arena_full).
    virtual json::Node* alloc_nodes(size_t count) {
        (void)count;
        return nullptr;
    }
    virtual void free_nodes(json::Node* nodes) { (void)nodes; }

protected:
    ~Host() = default;
};

// A Host made of plain functions, each optional (unset: the default above), for hosts that need no
// state of their own (tests, fuzz targets).
class CallbackHost final : public Host {
public:
    void (*now_rfc3339_fn)(char* out, size_t cap) = nullptr;
    uint64_t (*now_ns_fn)() = nullptr;
    void (*audit_fn)(const AuditEvent& event) = nullptr;
    bool (*audit_durable_fn)(const AuditEvent& event) = nullptr; // audit()'s answer (unset: true)
    uint64_t (*provenance_fn)(const ProvenanceNode& node) = nullptr;
    bool (*start_call)(const Tool& tool, const json::Value& arguments, const PendingCall& call,
                       ToolError& err) = nullptr;
    void (*cancel_call)(std::string_view raw_id, bool id_is_string, uint32_t origin) = nullptr;
    void (*client_response)(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                            uint32_t origin) = nullptr;
    json::Node* (*alloc_nodes_fn)(size_t count) = nullptr;
    void (*free_nodes_fn)(json::Node* nodes) = nullptr;

    void now_rfc3339(char* out, size_t cap) override {
        if (now_rfc3339_fn)
            now_rfc3339_fn(out, cap);
    }
    uint64_t now_ns() override { return now_ns_fn ? now_ns_fn() : 0; }
    bool audits() const override { return audit_fn != nullptr; }
    bool audit(const AuditEvent& event) override {
        audit_fn(event);
        return audit_durable_fn ? audit_durable_fn(event) : true;
    }
    bool keeps_provenance() const override { return provenance_fn != nullptr; }
    uint64_t provenance(const ProvenanceNode& node) override { return provenance_fn(node); }
    bool runs_calls() const override { return start_call != nullptr; }
    bool start(const Tool& tool, const json::Value& arguments, const PendingCall& call, ToolError& err) override {
        return start_call(tool, arguments, call, err);
    }
    void cancel(std::string_view raw_id, bool id_is_string, uint32_t origin) override {
        if (cancel_call)
            cancel_call(raw_id, id_is_string, origin);
    }
    void respond(std::string_view raw_id, bool id_is_string, std::string_view body, bool is_error,
                 uint32_t origin) override {
        if (client_response)
            client_response(raw_id, id_is_string, body, is_error, origin);
    }
    json::Node* alloc_nodes(size_t count) override { return alloc_nodes_fn ? alloc_nodes_fn(count) : nullptr; }
    void free_nodes(json::Node* nodes) override {
        if (free_nodes_fn)
            free_nodes_fn(nodes);
    }
};

} // namespace mcp
