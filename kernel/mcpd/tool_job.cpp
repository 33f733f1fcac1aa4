// A call's buffers and the capability its token is issued from, on the bridge's side.
#include "tool_job.h"

#include "../mm/kheap.h"
#include "tools/vector/vector_family.h"
#include <abi/rights.h>
#include <abi/sys.h>

namespace mcpd {

void release_buffers(Job& job) {
    if (job.args && job.args != job.inline_args)
        kheap::free(job.args);
    if (job.nodes && job.nodes != job.inline_nodes)
        kheap::free(job.nodes);
    if (job.exchange)
        kheap::free(job.exchange);
    if (job.round)
        kheap::free(job.round);
    job.args = nullptr;
    job.nodes = nullptr;
    job.arguments = {};
    job.exchange = nullptr;
    job.round = nullptr;
}

// The arguments the server parsed, moved into the job's buffers (the bridge's line buffer and
// message arena move on): their text and their subtree's nodes, exactly as many as they use, so
// the tool task reads the server's parse and never parses again (json::Document::copy_of).
// Absent arguments are the empty object.
bool take_buffers(Job& job, const json::Value& arguments) {
    static constexpr char kEmpty[] = "{}";
    json::Node empty_nodes[1];
    json::Document empty;
    json::Value from = arguments;
    if (!from.valid()) {
        auto doc = json::Document::parse({ kEmpty, 2 }, empty_nodes);
        if (!doc)
            return false;
        empty = *doc;
        from = empty.root();
    }
    const size_t text = from.json_text().size();
    const size_t nodes = from.subtree_nodes();
    if (text > kMaxArgs || nodes > kMaxNodes)
        return false;
    job.args = job.inline_args;
    job.nodes = job.inline_nodes;
    job.node_count = kInlineNodes;
    if (text > kInlineArgs) {
        auto mem = kheap::alloc(text);
        if (!mem)
            return false;
        job.args = static_cast<char*>(*mem);
    }
    if (nodes > kInlineNodes) {
        auto mem = kheap::alloc(nodes * sizeof(json::Node));
        if (!mem) {
            release_buffers(job);
            return false;
        }
        job.nodes = static_cast<json::Node*>(*mem);
        job.node_count = nodes;
    }
    auto copy = json::Document::copy_of(from, { job.args, text }, { job.nodes, job.node_count });
    if (!copy) {
        release_buffers(job);
        return false;
    }
    job.arguments = *copy;
    job.args_len = text;
    return true;
}

namespace {

// The object of Grant::Nothing tokens: one event per bridge, created once and never signalled.
ktl::Result<uint32_t> inert_event(ExecCaps& caps) {
    if (caps.inert == ~0u) {
        int64_t created = sys::event_create(caps.factory, 0);
        if (created < 0)
            return static_cast<ktl::Error>(-created);
        caps.inert = static_cast<uint32_t>(created);
    }
    return caps.inert;
}

} // namespace

// The capability (in the bridge's table) that this call's token is issued for. For a
// collection tool that is a fresh capability to the named collection only, which the bridge
// deletes again once the token exists (*transient). NotFound when the collection is absent.
ktl::Result<uint32_t> token_source(ExecCaps& caps, const ToolDef& def, const json::Value& arguments, bool* transient,
                                   bool* elsewhere) {
    *transient = false;
    *elsewhere = false;
    switch (def.grant) {
    case Grant::Introspection: return caps.introspection;
    case Grant::Store: return caps.store;
    case Grant::Nothing: return inert_event(caps);
    case Grant::Cluster: return caps.cluster;
    case Grant::Collection: break;
    case Grant::CollectionOrCluster:
        if (arguments.find("scope").plain_string().value_or("") != "cluster")
            break;
        if (caps.cluster == ~0u)
            return ktl::Error::Unsupported; // this node is in no cluster
        return caps.cluster;
    }
    // The schema already required a plain name; the store checks it once more.
    auto name = arguments.find("collection").plain_string();
    if (!name || name->empty() || name->size() > abi::kMaxNameLength)
        return ktl::Error::InvalidArgs;
    int64_t slot = sys::store_open(caps.store, name->data(), name->size(), def.rights | abi::kGrant);
    // Not here yet on a voter: a replicated collection another voter created may not be applied
    // here yet; after a read barrier through the group it is, if it was created before this call.
    if (slot == -static_cast<int64_t>(ktl::Error::NotFound) &&
        sys::store_sync(caps.store, name->data(), name->size()) == 1)
        slot = sys::store_open(caps.store, name->data(), name->size(), def.rights | abi::kGrant);
    // A read of a replicated collection other nodes hold: served by one of its voters, asked
    // through the cluster (the tool sees ToolContext::elsewhere). Changes have their stand-in.
    if (slot == -static_cast<int64_t>(ktl::Error::Elsewhere) && def.grant == Grant::CollectionOrCluster &&
        def.rights == abi::kRead && caps.cluster != ~0u) {
        *elsewhere = true;
        return caps.cluster;
    }
    if (slot < 0)
        return static_cast<ktl::Error>(-slot);
    *transient = true;
    return static_cast<uint32_t>(slot);
}

// What a token source that could not be had means for the caller.
mcp::ToolError source_error(ktl::Error e) {
    if (e == ktl::Error::NotFound)
        return { mcp::ErrorCode::NotFound, "no collection of that name", "missing_collection" };
    if (e == ktl::Error::NotReady)
        return still_recovering(0);
    if (e == ktl::Error::Elsewhere)
        return vec::error_of(-static_cast<int64_t>(e));
    if (e == ktl::Error::Unsupported)
        return { mcp::ErrorCode::ValidationFailed, "scope \"cluster\" needs a node in a cluster (cluster=)",
                 "no_cluster" };
    return { mcp::ErrorCode::ValidationFailed, "not a valid collection name", "invalid_name" };
}

// Tools whose calls reach the store (a collection's capability, or the store's).
bool needs_store(const ToolDef& def) {
    return def.grant == Grant::Store || def.grant == Grant::Collection || def.grant == Grant::CollectionOrCluster;
}

Recovery recovery(const ExecCaps& caps) {
    abi::StorageInfo info {};
    if (sys::storage_info(caps.introspection, &info) < 0)
        return { false, 0 }; // nothing to wait for that can be seen: the call runs and finds out
    return { info.state == static_cast<uint8_t>(abi::StorageState::Recovering), info.recovery_progress };
}

// A call whose time ran out while the store was still being recovered: retryable, never a failure
// of the call itself.
mcp::ToolError still_recovering(uint64_t replayed) {
    mcp::ToolError e { mcp::ErrorCode::Unavailable,
                       "the store is still being recovered from the disk: try again after details.retry_after_ms",
                       "recovering" };
    e.retry_after_ms = kRecoveryRetryMs;
    e.replayed_so_far = static_cast<int64_t>(replayed);
    return e;
}

void release_call(Job& job) {
    release_buffers(job);
    job.state = Job::State::Free;
}

} // namespace mcpd
