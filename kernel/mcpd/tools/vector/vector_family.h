#pragma once
// The vector store as MCP tools (issue 7): collection_create / _drop / _list / _stats / _export /
// _import and vector_upsert / _search / _get / _delete, one file each. Each call's token grants
// either the store (create, import and drop; list: read) or the one collection the call names
// (read, write or both), so a tool task can reach nothing else (tool_exec.h). What they share:
// schema pieces, system call results as envelope errors, scratch memory for one call, id lists
// from arguments. Every schema is bounded (strings maxLength, numbers ranges, arrays maxItems).
#include <cstddef>
#include <cstdint>

#include <json/json.h>
#include <ktl/result.h>
#include <mcp/server/server.h>

#include "../../tool_exec.h"
#include <abi/sys.h>

#define NAME_SCHEMA \
    R"({"type":"string","minLength":1,"maxLength":64,"format":"name","description":"letters, digits, _ - . but not only dots"})"
#define ID_SCHEMA        R"({"type":"integer","minimum":0,"maximum":9007199254740991})"
#define COMPONENT_SCHEMA R"({"type":"number","minimum":-3.4e38,"maximum":3.4e38})"
#define CONSISTENCY_SCHEMA \
    R"({"type":"string","enum":["linearizable","local"],"description":"a replicated collection: linearizable (default) sees every change committed before the call (a read barrier through the consensus group); local answers from this node's copy at once, possibly behind"})"

namespace mcpd::vec {

constexpr uint64_t kMaxId = 9007199254740991ull; // 2^53 - 1: exact in every JSON client

// A negative system call result as the envelope error a client can act on.
mcp::ToolError error_of(int64_t rc);
// A call stopped part-way: at its wall-time limit (late), or cancelled by its client.
mcp::ToolError stopped_error(bool late);

const char* metric_name(uint32_t metric);

// A read's consistency (docs/replication.md): a replicated collection (`stats.replicated`) is read
// linearizably (after a read barrier through the consensus group) unless the arguments ask "local";
// other collections have one copy (no system call). False, with `err` set, when the barrier is
// refused (no leader, timed out).
enum class Consistency : uint8_t { Single, Linearizable, Local };
bool read_consistency(const json::Value& args, uint32_t cap, const abi::VectorStats& stats, Consistency& out,
                      mcp::ToolError& err);
// `consistency` in a result, for a replicated collection only.
void write_consistency(json::Writer& w, Consistency c);

// A query left with the cluster task (fed_search through the cluster capability `cap`) and its
// result fetched once merged: a federated search, or a read from outside. False + err when it
// could not be asked or did not finish (`cluster_busy`).
bool fed_gather(uint32_t cap, const abi::FedQuery& q, abi::FedResult& out, mcp::ToolError& err);

// A read of a replicated collection this node holds no copy of (ToolContext::elsewhere), asked of
// the collection's voters (docs/replication.md "Reads from outside a group"): `q`'s mode from the
// arguments' consistency, the rest the caller's (op, name, sizes; `input` what it carries). True
// once a voter served it (out.nodes[0]); false + err when none could (no copy any more, a query
// that does not fit, no read index confirmed, no voter answered).
bool read_elsewhere(const json::Value& args, abi::FedQuery& q, const void* input, abi::FedResult& out,
                    mcp::ToolError& err, const ToolContext& ctx);
// `consistency` and `served_by` of a read from outside.
void write_served_by(json::Writer& w, bool confirmed, const char* node);
#define SERVED_BY_SCHEMA \
    R"("served_by":{"type":"string","description":"a replicated collection this node holds no copy of: the voter that served the read"})"

// Heap memory for one call, released when the body returns (tool stacks are 28 KiB).
class Scratch {
public:
    explicit Scratch(size_t bytes);
    ~Scratch();
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    bool ok() const { return m_ptr != nullptr; }
    template <typename T>
    T* as(size_t offset = 0) const {
        return reinterpret_cast<T*>(static_cast<char*>(m_ptr) + offset);
    }

private:
    void* m_ptr = nullptr;
};

// A JSON array of exactly `dim` finite numbers into floats; false otherwise.
bool read_row(const json::Value& row, float* out, uint32_t dim);
// The integers of a schema-checked id array into out[0..n); false if one is not an exact
// integer in 0..kMaxId (the schema said so already; the body does not rely on it).
bool read_ids(const json::Value& array, uint64_t* out, size_t max, size_t& n);

// The collection's dimension and metric (vec_stats through the granted capability).
ktl::Result<uint32_t> dimension_of(uint32_t cap);
// The collection's statistics (its dimension, and whether it is replicated): one vec_stats;
// WrongType for a document collection.
ktl::Result<abi::VectorStats> stats_of(uint32_t cap);

// A create or drop the store answers WouldBlock for a moment (a checkpoint holding writes back,
// the last requests on a collection draining): tried again for up to eight seconds (a checkpoint
// of a large collection takes seconds; the tool limit is ten), in steps of
// 5 ms, before the caller hears `busy`.
template <typename Call>
int64_t store_call_retrying(Call&& call) {
    int64_t rc = call();
    for (int i = 0; i < 1600 && rc == -static_cast<int64_t>(ktl::Error::WouldBlock); ++i) {
        sys::sleep_ns(5'000'000);
        rc = call();
    }
    return rc;
}

} // namespace mcpd::vec
