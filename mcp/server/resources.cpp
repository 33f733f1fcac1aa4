// Resources (MCP "Resources"): resources/list and the JSON snapshot resources' resources/read
// (resource_extras.cpp has the resources that write their own contents, templates and
// subscriptions).
#include "server.h"

#include "dispatch.h"

namespace mcp {

bool Server::resource_allowed(std::string_view uri) const {
    for (auto u : m_config.resource_allowlist)
        if (u == uri)
            return true;
    return false;
}

void Server::resources_list(Request& r) {
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kStaticTtlMs, "public");
    w.key("resources").begin_array();
    for (const auto& res : m_config.resources) {
        if (!resource_allowed(res.uri))
            continue;
        w.begin_object().key("uri").string(res.uri).key("name").string(res.name).key("title").string(res.title);
        w.key("description").string(res.description);
        w.key("mimeType").string(res.mime_type ? res.mime_type : "application/json").end_object();
    }
    w.end_array().end_object().end_object();
}

void Server::resources_read(Request& r) {
    auto uri = r.params.find("uri").plain_string();
    r.kind = AuditKind::Resource;
    r.name = uri.value_or("");
    r.action = "read";
    if (!admit_inline(r))
        return;
    if (uri && read_contents(r, *uri))
        return; // a resource that writes its own contents, or a template's
    const Resource* res = nullptr;
    if (uri && resource_allowed(*uri))
        for (const auto& candidate : m_config.resources)
            if (*uri == candidate.uri)
                res = &candidate;
    if (!res) {
        // Unknown resource: -32002 in the 2025 revisions ("Resources", error handling), -32602 in
        // 2026-07-28, which retired -32002. The envelope names the contract code either way.
        refuse_unknown(r, r.modern ? kInvalidParams : kResourceNotFound, "Resource not found",
                       "no such resource, or it is not on the allowlist", { "uri", uri.value_or("") });
        return;
    }
    if (!authorise(r, res->scopes))
        return;
    json::Writer sw(m_scratch);
    sw.begin_object();
    sw.key("uri").string(res->uri).key("version").string(res->payload_version);
    sw.key("generated_at").string(r.timestamp).key("source_commit").string(m_config.source_commit);
    ToolError err;
    bool ok = res->read(sw, err);
    sw.end_object();
    if (!output_ready(r, ok, sw, err, "Resource unavailable"))
        return;
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kLiveTtlMs, "private");
    w.key("contents").begin_array().begin_object();
    w.key("uri").string(res->uri).key("mimeType").string("application/json").key("text").string(sw.view());
    w.end_object().end_array().end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
}
} // namespace mcp
