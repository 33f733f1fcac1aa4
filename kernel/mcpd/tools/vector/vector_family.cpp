#include "vector_family.h"

#include "../../../mm/kheap.h"
#include <abi/sys.h>

namespace mcpd::vec {

mcp::ToolError error_of(int64_t rc) {
    switch (static_cast<ktl::Error>(-rc)) {
    case ktl::Error::NotFound: return { mcp::ErrorCode::NotFound, "no such collection or id", "not_found" };
    case ktl::Error::BadHandle:
        return { mcp::ErrorCode::NotFound, "the collection was dropped during the call", "missing_collection" };
    case ktl::Error::Exists: return { mcp::ErrorCode::ValidationFailed, "a collection of that name exists", "exists" };
    case ktl::Error::InvalidArgs:
        return { mcp::ErrorCode::ValidationFailed, "the store refused the arguments", "invalid_arguments" };
    case ktl::Error::Full: return { mcp::ErrorCode::InternalError, "the collection is full", "collection_full" };
    case ktl::Error::NoMemory:
        return { mcp::ErrorCode::InternalError, "out of memory (collection budget or kernel)", "no_memory" };
    case ktl::Error::Corrupt:
        return { mcp::ErrorCode::ValidationFailed, "the snapshot is corrupt", "corrupt_snapshot" };
    case ktl::Error::Truncated:
        return { mcp::ErrorCode::ValidationFailed, "the snapshot is truncated", "truncated_snapshot" };
    case ktl::Error::Unsupported:
        return { mcp::ErrorCode::ValidationFailed, "unsupported snapshot version or parameters",
                 "unsupported_snapshot" };
    case ktl::Error::WouldBlock:
        return { mcp::ErrorCode::LimitConcurrencyExceeded, "the vector store is busy", "busy" };
    case ktl::Error::NoSpace:
        return { mcp::ErrorCode::StorageFull, "the disk has no room for this change: nothing was written",
                 "storage_full" };
    case ktl::Error::NotReady: { // calls wait for the store before they start; met anyway, it is still retryable
        mcp::ToolError e {
            mcp::ErrorCode::Unavailable,
            "the store is being recovered from the disk: try again after details.retry_after_ms (kernel://status shows how far it is)",
            "recovering"
        };
        e.retry_after_ms = 1000;
        return e;
    }
    case ktl::Error::NotVoter:
        return { mcp::ErrorCode::Unavailable,
                 "this node is no voter of the consensus group (a spare, or a voter replaced while it was down): "
                 "change a replicated collection at a voter (cluster_status: consensus.servers)",
                 "not_a_voter" };
    case ktl::Error::Elsewhere:
        return { mcp::ErrorCode::NotFound,
                 "the collection is replicated on other nodes and this node holds no copy: call one of its voters "
                 "(cluster_status: consensus.collections[].voters)",
                 "held_elsewhere" };
    case ktl::Error::NotLeader:
        return { mcp::ErrorCode::Unavailable,
                 "the consensus group has no leader now (an election is under way): a replicated collection "
                 "cannot change until it has one; try again shortly (cluster_status: consensus.leader)",
                 "not_leader" };
    case ktl::Error::TimedOut:
        return { mcp::ErrorCode::Unavailable,
                 "the consensus group did not commit the change while this node led it: it may or may not be "
                 "stored (read it back before sending it again)",
                 "outcome_unknown" };
    case ktl::Error::WrongType:
        return { mcp::ErrorCode::ValidationFailed,
                 "this collection holds documents, not vectors: use the document_* tools on it",
                 "not_a_vector_collection" };
    case ktl::Error::IoError:
        return { mcp::ErrorCode::InternalError,
                 "the disk failed: durable collections are read-only until a restart (see kernel://status)",
                 "storage_failed" };
    default: return { mcp::ErrorCode::InternalError, "the vector store failed", nullptr };
    }
}

mcp::ToolError stopped_error(bool late) {
    return late ? mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" }
                : mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client", "cancelled" };
}

bool read_consistency(const json::Value& args, uint32_t cap, const abi::VectorStats& stats, Consistency& out,
                      mcp::ToolError& err) {
    if (!stats.replicated) {
        out = Consistency::Single;
        return true;
    }
    const bool local = args.find("consistency").plain_string().value_or("") == "local";
    const int64_t rc = local ? 1 : sys::vec_sync(cap);
    if (rc == -static_cast<int64_t>(ktl::Error::NotVoter)) {
        err = { mcp::ErrorCode::Unavailable,
                "this node is no voter of the consensus group (a spare, or a voter replaced while it was down): read "
                "at a voter (cluster_status: consensus.servers), or this node's copy with consistency \"local\"",
                "not_a_voter" };
        return false;
    }
    if (rc == -static_cast<int64_t>(ktl::Error::NotLeader) || rc == -static_cast<int64_t>(ktl::Error::TimedOut)) {
        err = { mcp::ErrorCode::Unavailable,
                "the consensus group could not confirm a linearizable read now (no leader, or it did not answer "
                "in time): try again shortly, or read this node's copy with consistency \"local\"",
                rc == -static_cast<int64_t>(ktl::Error::NotLeader) ? "not_leader" : "read_unconfirmed" };
        return false;
    }
    if (rc < 0) {
        err = error_of(rc);
        return false;
    }
    out = rc == 0 ? Consistency::Single : local ? Consistency::Local : Consistency::Linearizable;
    return true;
}

void write_consistency(json::Writer& w, Consistency c) {
    if (c != Consistency::Single)
        w.key("consistency").string(c == Consistency::Local ? "local" : "linearizable");
}

bool fed_gather(uint32_t cap, const abi::FedQuery& q, abi::FedResult& out, mcp::ToolError& err) {
    const int64_t id = sys::fed_search(cap, &q);
    if (id < 0) {
        err = { mcp::ErrorCode::Unavailable,
                id == -static_cast<int64_t>(ktl::Error::WouldBlock)
                    ? "four federated searches or reads are already running on this node: try again shortly"
                    : "this node's cluster task is not running yet: try again shortly",
                "cluster_busy" };
        return false;
    }
    // Asked until the cluster task has merged it (each ask waits for it up to 100 ms; the query's
    // deadline and a margin for the merge bound the whole).
    const uint64_t give_up = sys::clock_ns() + (uint64_t(q.deadline_ms) + 1500) * 1'000'000ull;
    int64_t r = 0;
    while (((r = sys::fed_result(cap, static_cast<uint64_t>(id), &out)) == 0 ||
            r == -static_cast<int64_t>(ktl::Error::TimedOut)) &&
           sys::clock_ns() < give_up) {}
    if (r != 1) {
        err = { mcp::ErrorCode::Unavailable, "the federated search did not finish: try again", "cluster_busy" };
        return false;
    }
    return true;
}

bool read_elsewhere(const json::Value& args, abi::FedQuery& q, const void* input, abi::FedResult& out,
                    mcp::ToolError& err, const ToolContext& ctx) {
    auto name = args.find("collection").plain_string();
    if (!name || name->empty() || name->size() > abi::kMaxNameLength) {
        err = { mcp::ErrorCode::ValidationFailed, "not a valid collection name", "invalid_name" };
        return false;
    }
    for (size_t i = 0; i < name->size(); ++i)
        q.name[i] = (*name)[i];
    q.name[name->size()] = '\0';
    const bool local = args.find("consistency").plain_string().value_or("") == "local";
    q.mode = local ? abi::kFedVoterLocal : abi::kFedVoterLinearizable;
    q.deadline_ms = 4000; // (a voter that is up answers in milliseconds; a read index in tens)
    q.vector = reinterpret_cast<uint64_t>(input);
    if (!fed_gather(ctx.cap, q, out, err))
        return false;
    if (out.answered != 0)
        return true;
    switch (out.refusal) {
    case 1:
        err = { mcp::ErrorCode::NotFound, "no collection of that name (its voters hold none now)",
                "missing_collection" };
        break;
    case 2:
        err = { mcp::ErrorCode::ValidationFailed, "the query must have exactly the collection's dimension",
                "dimension_mismatch" };
        break;
    case 3:
        err = { mcp::ErrorCode::Unavailable,
                "this node holds no copy of the collection, and its voters could not confirm a linearizable read "
                "now (no leader, or it did not answer in time): try again shortly, or ask consistency \"local\"",
                "read_unconfirmed" };
        break;
    default:
        err = { mcp::ErrorCode::Unavailable,
                "this node holds no copy of the collection, and none of its voters answered (cluster_status: "
                "consensus.collections names them): try again shortly",
                "voters_unreachable" };
    }
    return false;
}

void write_served_by(json::Writer& w, bool confirmed, const char* node) {
    w.key("consistency").string(confirmed ? "linearizable" : "local").key("served_by").string(node);
}

const char* metric_name(uint32_t metric) {
    static const char* const names[] = { "l2", "cosine", "ip" };
    return metric < 3 ? names[metric] : "?";
}

Scratch::Scratch(size_t bytes) {
    auto mem = kheap::alloc(bytes);
    m_ptr = mem ? *mem : nullptr;
}

Scratch::~Scratch() {
    if (m_ptr)
        kheap::free(m_ptr);
}

// A row of a JSON array into floats; false unless exactly `dim` finite numbers.
bool read_row(const json::Value& row, float* out, uint32_t dim) {
    if (!row.is_array() || row.size() != dim)
        return false;
    uint32_t i = 0;
    for (json::Value v = row.first(); v.valid() && i < dim; v = v.next_sibling()) {
        auto f = v.as_float();
        if (!f)
            return false;
        out[i++] = *f;
    }
    return i == dim;
}

bool read_ids(const json::Value& array, uint64_t* out, size_t max, size_t& n) {
    n = 0;
    for (json::Value v = array.first(); v.valid(); v = v.next_sibling()) {
        auto id = v.as_uint64();
        if (!id || *id > kMaxId || n >= max)
            return false;
        out[n++] = *id;
    }
    return true;
}

ktl::Result<abi::VectorStats> stats_of(uint32_t cap) {
    abi::VectorStats st {};
    int64_t rc = sys::vec_stats(cap, &st);
    if (rc < 0)
        return static_cast<ktl::Error>(-rc);
    if (st.kind == 1)
        return ktl::Error::WrongType; // a document collection: its own tools (error_of says which)
    return st;
}

ktl::Result<uint32_t> dimension_of(uint32_t cap) {
    auto st = stats_of(cap);
    if (!st)
        return st.error();
    return st->dim;
}

} // namespace mcpd::vec
