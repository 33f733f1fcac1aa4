// Resources beyond the JSON snapshots of resources.cpp: resources that write their own contents
// entry (text or blob), resource templates (resources/templates/list, reads through a template),
// and subscriptions (resources/subscribe, resources/unsubscribe, notifications/resources/updated).
// MCP spec 2025-11-25 "Resources".
#include "dispatch.h"

namespace mcp {
namespace {

constexpr size_t kMaxVarLength = 64;
constexpr size_t kMaxTemplateVars = 4;

bool var_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

// Matches `uri` against an RFC 6570 level 1 template: literal text must be equal, each {name}
// takes the longest run (1..kMaxVarLength) of unreserved characters. False on any mismatch.
bool match(std::string_view tpl, std::string_view uri, TemplateVar* vars, size_t max_vars, size_t& nvars) {
    nvars = 0;
    size_t t = 0, u = 0;
    while (t < tpl.size()) {
        if (tpl[t] != '{') {
            if (u >= uri.size() || uri[u] != tpl[t])
                return false;
            ++t, ++u;
            continue;
        }
        size_t close = tpl.find('}', t);
        if (close == std::string_view::npos || nvars == max_vars)
            return false;
        size_t start = u;
        while (u < uri.size() && u - start < kMaxVarLength && var_char(uri[u]))
            ++u;
        if (u == start || (u < uri.size() && var_char(uri[u])))
            return false; // empty, or longer than kMaxVarLength
        vars[nvars++] = { tpl.substr(t + 1, close - t - 1), uri.substr(start, u - start) };
        t = close + 1;
    }
    return u == uri.size();
}

} // namespace

const Resource* Server::find_resource(std::string_view uri) const {
    if (!resource_allowed(uri))
        return nullptr;
    for (const auto& res : m_config.resources)
        if (uri == res.uri)
            return &res;
    return nullptr;
}

const ResourceTemplate* Server::match_template(std::string_view uri, TemplateVar* vars, size_t max_vars,
                                               size_t& nvars) const {
    for (const auto& t : m_config.resource_templates)
        if (resource_allowed(t.uri_template) && match(t.uri_template, uri, vars, max_vars, nvars))
            return &t;
    return nullptr;
}

void Server::templates_list(Request& r) {
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kStaticTtlMs, "public");
    w.key("resourceTemplates").begin_array();
    for (const auto& t : m_config.resource_templates) {
        if (!resource_allowed(t.uri_template))
            continue;
        w.begin_object()
            .key("uriTemplate")
            .string(t.uri_template)
            .key("name")
            .string(t.name)
            .key("title")
            .string(t.title);
        w.key("description").string(t.description).key("mimeType").string(t.mime_type).end_object();
    }
    w.end_array().end_object().end_object();
}

// resources/read of a resource with contents() or through a template. False: not one of those
// (resources.cpp goes on with the snapshots); true: answered and audited.
bool Server::read_contents(Request& r, std::string_view uri) {
    TemplateVar vars[kMaxTemplateVars];
    size_t nvars = 0;
    const Resource* res = find_resource(uri);
    if (res && !res->contents)
        return false;
    const ResourceTemplate* tpl = res ? nullptr : match_template(uri, vars, kMaxTemplateVars, nvars);
    if (!res && !tpl)
        return false;
    if (!authorise(r, res ? res->scopes : tpl->scopes))
        return true;
    json::Writer ew(m_scratch);
    ew.begin_object().key("uri").string(uri).key("mimeType").string(res ? res->mime_type : tpl->mime_type);
    ToolError err;
    ResourceRead in { uri, { vars, nvars }, m_host.now_ns() };
    bool ok = res ? res->contents(in, ew, err) : tpl->contents(in, ew, err);
    // The contract's snapshot fields, where MCP lets a contents entry carry them.
    ew.key("_meta").begin_object().key("version").string(res ? res->payload_version : tpl->payload_version);
    ew.key("generated_at").string(r.timestamp).key("source_commit").string(m_config.source_commit).end_object();
    ew.end_object();
    if (!ok && err.code == ErrorCode::NotFound) {
        // A template whose variables name nothing: the resource does not exist, said the way an
        // unknown URI is, with the reason the contents gave.
        refuse_unknown(r, r.modern ? kInvalidParams : kResourceNotFound, "Resource not found", err.message,
                       { "uri", uri });
        return true;
    }
    if (!output_ready(r, ok, ew, err, "Resource unavailable"))
        return true;
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kLiveTtlMs, "private");
    w.key("contents").begin_array().raw(ew.view()).end_array().end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
    return true;
}

// resources/subscribe (on) and resources/unsubscribe: the same admission as a read (allowlist,
// scopes); the session holds at most Session::kMaxSubscriptions. Both answer {}.
void Server::subscribe(Request& r, Session& s, bool on) {
    auto uri = r.params.find("uri").plain_string();
    r.kind = AuditKind::Resource;
    r.name = uri.value_or("");
    const Resource* res = uri ? find_resource(*uri) : nullptr;
    if (!res) {
        refuse_unknown(r, kResourceNotFound, "Resource not found", "no such resource, or it is not on the allowlist",
                       { "uri", uri.value_or("") });
        return;
    }
    if (!authorise(r, res->scopes))
        return;
    auto index = static_cast<uint16_t>(res - m_config.resources.data());
    size_t at = 0;
    while (at < s.subscription_count && s.subscriptions[at].resource != index)
        ++at;
    if (on && at == s.subscription_count) {
        if (s.subscription_count == Session::kMaxSubscriptions) {
            error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                        "this session holds as many subscriptions as it may", r.request_id, r.timestamp,
                        { { "reason", "too_many_subscriptions" } });
            audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
            return;
        }
        uint64_t now = m_host.now_ns();
        s.subscriptions[s.subscription_count++] = { index, res->revision ? res->revision(now) : 0 };
    } else if (!on && at < s.subscription_count) {
        s.subscriptions[at] = s.subscriptions[--s.subscription_count];
    }
    begin_reply(r.w, r.id);
    r.w.key("result").begin_object().end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
}

size_t Server::next_resource_update(Session& s, std::span<char> out) {
    uint64_t now = m_host.now_ns();
    for (size_t i = 0; i < s.subscription_count; ++i) {
        Subscription& sub = s.subscriptions[i];
        const Resource& res = m_config.resources[sub.resource];
        if (!res.revision)
            continue;
        uint64_t revision = res.revision(now);
        if (revision == sub.revision)
            continue;
        sub.revision = revision;
        json::Writer w(out);
        w.begin_object().key("jsonrpc").string("2.0").key("method").string("notifications/resources/updated");
        w.key("params").begin_object().key("uri").string(res.uri).end_object().end_object();
        return w.complete() ? w.size() : 0;
    }
    return 0;
}

} // namespace mcp
