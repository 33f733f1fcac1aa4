// Prompts (prompts/list, prompts/get) and argument completion (completion/complete), MCP spec
// 2025-11-25 "Prompts" and "Completion". Admission as for tools: allowlist (deny by default),
// scopes, then the arguments (declared names only, strings of bounded length); every decision is
// audited with kind prompt (completions of a template variable: kind resource).
#include "dispatch.h"
#include "client_request.h"

namespace mcp {
namespace {

constexpr size_t kMaxPromptArguments = 16;

const Argument* find_argument(std::span<const Argument> list, const json::Value& name) {
    for (const auto& a : list)
        if (name.string_equals(a.name))
            return &a;
    return nullptr;
}

// Why a prompt's arguments are refused (nullptr: they are fine); `which` names the declared
// argument concerned, if any (an undeclared name is never echoed).
const char* argument_problem(const Prompt& p, const json::Value& args, const char*& which) {
    which = "";
    if (args.valid() && args.size() > kMaxPromptArguments)
        return "too_many_arguments";
    for (json::Value m = args.first(); m.valid(); m = m.next_sibling()) {
        const Argument* a = nullptr;
        for (const auto& candidate : p.arguments)
            if (m.key_equals(candidate.name))
                a = &candidate;
        if (!a)
            return "unknown_argument";
        which = a->name;
        char buf[Server::kMaxPromptArgument];
        if (!m.is_string())
            return "argument_not_string";
        if (!m.string_into(buf).ok())
            return "argument_too_long";
    }
    for (const auto& a : p.arguments) {
        which = a.name;
        if (a.required && !args.find(a.name).valid())
            return "missing_argument";
    }
    which = "";
    return nullptr;
}

} // namespace

const Prompt* Server::find_prompt(std::string_view name) const {
    bool listed = false;
    for (auto allowed : m_config.prompt_allowlist)
        listed = listed || allowed == name;
    if (listed)
        for (const auto& p : m_config.prompts)
            if (name == p.name)
                return &p;
    return nullptr;
}

void Server::prompts_list(Request& r) {
    uint32_t offset = 0;
    if (!begin_list(r, offset))
        return;
    json::Writer& w = r.w;
    auto listed = [this](const Prompt& p) { return find_prompt(p.name) != nullptr; };
    write_page(w, "prompts", m_config.prompts, offset, m_config.page_size, listed, [&w](const Prompt& p) {
        w.begin_object()
            .key("name")
            .string(p.name)
            .key("title")
            .string(p.title)
            .key("description")
            .string(p.description);
        w.key("arguments").begin_array();
        for (const auto& a : p.arguments) {
            w.begin_object().key("name").string(a.name).key("description").string(a.description);
            w.key("required").boolean(a.required).end_object();
        }
        w.end_array().end_object();
    });
    w.end_object().end_object();
}

void Server::prompts_get(Request& r) {
    json::Value args;
    if (!named_request(r, AuditKind::Prompt, "prompts/get needs a name and an arguments object", args))
        return;
    r.action = "get";
    std::string_view name = r.name;
    if (!admit_inline(r))
        return;
    const Prompt* p = find_prompt(name);
    if (!p) {
        refuse_unknown(r, kInvalidParams, "Unknown prompt", "no such prompt, or it is not on the allowlist",
                       { "prompt", name });
        return;
    }
    if (!authorise(r, p->scopes))
        return;
    const char* which = "";
    if (const char* problem = argument_problem(*p, args, which)) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                    "the arguments do not match the prompt's", r.request_id, r.timestamp,
                    { { "reason", problem }, { "argument", which } });
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
        return;
    }
    json::Writer mw(m_scratch);
    ToolError err;
    bool ok;
    if (p->get_input && r.modern) {
        // 2026-07-28: the prompt may ask the client (input_round.h), its answers in this request.
        const StateBinding b { "prompts/get", bound_name(name), r.args_hash,
                               r.principal ? r.principal->id : uint16_t(0) };
        std::string_view fresh, carried;
        if (!gather_input(r, b, fresh, carried))
            return;
        if (!m_round.load(fresh, carried)) {
            error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                        "the input responses have too many values", r.request_id, r.timestamp,
                        { { "reason", "input_too_large" } });
            return;
        }
        m_round.set_caps(declared_capabilities(r.params));
        ok = p->get_input(args, &m_round, mw, err);
        if (m_round.pending()) {
            auto begin = [&](json::Writer& w) { begin_reply(w, r.id); };
            if (m_round.used_fits() && write_input_required(r.w, begin, m_config.state_key, b, m_host.now_ns(),
                                                            m_round.requests(), m_round.used(), m_state_text)) {
                audit(r, AuditOutcome::Allow, "input_required");
                return;
            }
            ok = false;
            err = { ErrorCode::LimitOutputExceeded,
                    "the input this prompt needs is too large to carry to another round" };
        }
    } else {
        ok = p->get_input ? p->get_input(args, nullptr, mw, err) : p->get(args, mw, err);
    }
    if (ok && mw.complete() && mw.view()[0] != '[') {
        ok = false;
        err = { ErrorCode::InternalError, "malformed prompt" };
    }
    if (!output_ready(r, ok, mw, err, "Prompt unavailable"))
        return;
    json::Writer& w = r.w;
    begin_result(r);
    cache_hint(r, kLiveTtlMs, "private");
    w.key("description").string(p->description).key("messages").raw(mw.view()).end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
}

// completion/complete: ref/prompt (a prompt's argument) or ref/resource (a template's
// variable, the template named by its exact uriTemplate). Values are the argument's candidates
// that start with the given value, in their order.
void Server::complete(Request& r) {
    if (m_config.prompt_allowlist.empty() && m_config.resource_templates.empty()) {
        error_reply(r.w, r.id, kMethodNotFound, "Method not found", ErrorCode::ValidationFailed,
                    "nothing here completes", r.request_id, r.timestamp, { { "reason", "unknown_method" } });
        return;
    }
    json::Value ref = r.params.find("ref");
    json::Value type = ref.find("type");
    auto target = (type.string_equals("ref/prompt") ? ref.find("name") : ref.find("uri")).plain_string();
    json::Value argument = r.params.find("argument");
    char value[kMaxPromptArgument];
    auto value_len = argument.find("value").string_into(value);
    bool is_prompt = type.string_equals("ref/prompt");
    if (!(is_prompt || type.string_equals("ref/resource")) || !target || !argument.find("name").is_string() ||
        !argument.find("value").is_string() || !value_len) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                    "completion/complete needs a ref (ref/prompt with a name, ref/resource with a uri) and an argument "
                    "{name, value} of at most 256 bytes",
                    r.request_id, r.timestamp, { { "reason", "invalid_ref" } });
        return;
    }
    r.kind = is_prompt ? AuditKind::Prompt : AuditKind::Resource;
    r.name = *target;
    std::span<const Argument> arguments;
    uint32_t scopes = 0;
    bool found = false;
    if (const Prompt* p = is_prompt ? find_prompt(*target) : nullptr) {
        arguments = p->arguments, scopes = p->scopes, found = true;
    } else if (!is_prompt && resource_allowed(*target)) {
        for (const auto& t : m_config.resource_templates)
            if (*target == t.uri_template)
                arguments = t.variables, scopes = t.scopes, found = true;
    }
    if (!found) {
        refuse_unknown(r, kInvalidParams, is_prompt ? "Unknown prompt" : "Unknown resource template",
                       "no such prompt or resource template, or it is not on the allowlist",
                       { is_prompt ? "prompt" : "uri", *target });
        return;
    }
    if (!authorise(r, scopes))
        return;
    const Argument* a = find_argument(arguments, argument.find("name"));
    if (!a) {
        error_reply(r.w, r.id, kInvalidParams, "Invalid params", ErrorCode::ValidationFailed,
                    "no argument of that name to complete", r.request_id, r.timestamp,
                    { { "reason", "unknown_argument" } });
        audit(r, AuditOutcome::Deny, error_code_name(ErrorCode::ValidationFailed));
        return;
    }
    std::string_view prefix(value, *value_len);
    json::Writer& w = r.w;
    begin_result(r);
    w.key("completion").begin_object().key("values").begin_array();
    uint64_t total = 0;
    for (const char* candidate : a->completions) {
        std::string_view c(candidate);
        if (c.substr(0, prefix.size()) == prefix && total++ < kMaxCompletions)
            w.string(c);
    }
    w.end_array().key("total").number(total).key("hasMore").boolean(total > kMaxCompletions);
    w.end_object().end_object().end_object();
    audit(r, AuditOutcome::Allow, "");
}

} // namespace mcp
