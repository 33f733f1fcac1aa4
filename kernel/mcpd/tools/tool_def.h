#pragma once
// One tool, declared once (issue 33): its tools/list entry, its body, the capability its token
// grants, and what it does to stored data as the sink policy (../sink_gate.h) classifies it. Each
// tool defines its ToolDef in a file of its own (tools/<family>/<tool>.cpp); tool_table.cpp lists
// them in tools/list order. The dispatcher reaches a call's ToolDef through the descriptor the
// server matched (tool_table.h): no name is compared to decide what a call may do.
//
// The definition is checked when the kernel is compiled (the constructors are consteval): a tool
// whose token may change the store must say how (an Effect other than read_only(), which has no
// default), and a tool that says it changes data must be able to reach the store with a right
// that does. A new destructive tool without its sink class does not build, where a name list
// would have let it run without a step-up.
#include <cstdint>

#include <cap/rights.h>
#include <mcp/server/server.h>

namespace mcpd {

struct ToolContext;

using ToolBody = bool (*)(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);

// The capability a call's token grants (fail-closed: a call whose object cannot be named gets none).
enum class Grant : uint8_t {
    Introspection, // the kernel's introspection object
    Store,         // the named vector store itself
    Collection,    // the collection named by the call's "collection" argument
    Nothing,       // no authority: a wait right on an event nobody signals (the test fixtures)
    Cluster,       // cluster membership (read: status; write: probes)
    // The named collection, or the cluster capability with the same rights instead where the data
    // lives on other nodes: the call's "scope" is "cluster" (a federated search), or a read-only
    // call names a replicated collection this node holds no copy of (ToolContext::elsewhere).
    CollectionOrCluster,
};

// What a call of the tool does to stored data, as the sink policy sees it. The collection acted on
// is the argument the descriptor names as its target (mcp::Tool::target_key), the one the audit
// trail records too.
enum class SinkClass : uint8_t {
    None,        // nothing the sink policy covers
    Create,      // makes a collection (mcp::Sink::Create)
    Write,       // stores vectors by id (mcp::Sink::Write; the "ids" it names are counted)
    DeleteByIds, // deletes vectors by id (mcp::Sink::Delete, BulkDelete past the rules' threshold)
    Drop,        // destroys a whole collection (mcp::Sink::Drop)
};

// A tool's effect, chosen explicitly in its definition (there is no default).
class Effect {
public:
    static consteval Effect read_only() { return { false, SinkClass::None }; }
    static consteval Effect creates() { return { true, SinkClass::Create }; }
    static consteval Effect writes_ids() { return { true, SinkClass::Write }; }
    static consteval Effect deletes_ids() { return { true, SinkClass::DeleteByIds }; }
    static consteval Effect drops() { return { true, SinkClass::Drop }; }
    // Changes data through a path the sink policy does not gate: the definition says why.
    static consteval Effect ungated() { return { true, SinkClass::None }; }

    constexpr bool mutates() const { return m_mutates; }
    constexpr SinkClass sink() const { return m_sink; }

private:
    consteval Effect(bool mutates, SinkClass sink) : m_mutates(mutates), m_sink(sink) {}
    bool m_mutates;
    SinkClass m_sink;
};

// How the bridge starts a call of the tool.
enum class Flow : uint8_t {
    Run,             // its body runs in the call's task
    ApproveProposal, // the approved proposal's own call runs in its place (its body never runs)
    RejectProposal,  // the bridge rejects the proposal first; then its body reports it
};

// Whether the body asks the client (ToolContext::request): 2026-07-28 calls get an input round.
enum class Asks : bool { No, Yes };

// The rights on the store or a collection that change what is stored.
constexpr uint32_t kDataRights = uint32_t(cap::Rights::Write) | uint32_t(cap::Rights::Create) |
                                 uint32_t(cap::Rights::Import) | uint32_t(cap::Rights::Drop);

// The rule every definition is compiled under: the effect is mutating exactly when the token may
// change the store, and a sink class needs the argument naming its collection.
constexpr bool effect_fits(Grant grant, uint32_t rights, Effect effect, const char* target_key) {
    const bool reaches_data = (grant == Grant::Store || grant == Grant::Collection ||
                               grant == Grant::CollectionOrCluster) &&
                              (rights & kDataRights) != 0;
    if (reaches_data != effect.mutates())
        return false;
    return effect.sink() == SinkClass::None || target_key != nullptr;
}

// Not constexpr, never defined: reached only while compiling a definition that breaks the rule,
// which then fails to build with this name in the message.
void tool_effect_does_not_match_its_rights_or_names_no_target();

struct ToolDef {
    // A tool with its descriptor in its own file.
    consteval ToolDef(const mcp::Tool& descriptor, ToolBody body, Grant grant, uint32_t rights, Effect effect,
                      Flow flow = Flow::Run, Asks asks = Asks::No)
        : descriptor(&descriptor), name(descriptor.name), body(body), grant(grant), rights(rights), effect(effect),
          flow(flow), asks(asks == Asks::Yes) {
        if (!effect_fits(grant, rights, effect, descriptor.target_key))
            tool_effect_does_not_match_its_rights_or_names_no_target();
    }
    // A conformance fixture: its descriptor is the portable one of mcp/fixtures with this name
    // (tool_table.cpp finds it once, when the table is built).
    struct Fixture {
        const char* name;
    };
    consteval ToolDef(Fixture fixture, ToolBody body, Grant grant, uint32_t rights, Effect effect,
                      Flow flow = Flow::Run, Asks asks = Asks::No)
        : descriptor(nullptr), name(fixture.name), body(body), grant(grant), rights(rights), effect(effect), flow(flow),
          asks(asks == Asks::Yes) {
        if (!effect_fits(grant, rights, effect, nullptr))
            tool_effect_does_not_match_its_rights_or_names_no_target();
    }

    const mcp::Tool* descriptor; // nullptr: a fixture's, from mcp/fixtures
    const char* name;
    ToolBody body;
    Grant grant;
    uint32_t rights; // exactly these rights on the granted object
    Effect effect;
    Flow flow;
    bool asks;
};

} // namespace mcpd

// Defines the ToolDef `id` (in mcpd::tools, with external linkage: tool_table.cpp lists it):
//     MCPD_TOOL(kernel_info) { kTool, run, Grant::Introspection, abi::kRead, Effect::read_only() };
#define MCPD_TOOL(id) \
    extern const ::mcpd::ToolDef id; \
    constinit const ::mcpd::ToolDef id
