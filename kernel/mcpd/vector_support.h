#pragma once
// Helpers shared by the vector tool bodies: system call results as envelope errors, scratch
// memory for one call, id lists from arguments.
#include <cstddef>
#include <cstdint>

#include <json/json.h>
#include <ktl/result.h>
#include <mcp/server/server.h>

#include "tool_exec.h"

namespace mcpd::vec {

constexpr uint64_t kMaxId = 9007199254740991ull; // 2^53 - 1: exact in every JSON client

// A negative system call result as the envelope error a client can act on.
mcp::ToolError error_of(int64_t rc);

const char* metric_name(uint32_t metric);

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

// Tool bodies (vector_query.cpp, vector_write.cpp, vector_snapshot.cpp).
bool search(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);
bool get(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);
bool upsert(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);
bool remove(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);
bool export_snapshot(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);
bool import_snapshot(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx);

// The collection's dimension and metric (vec_stats through the granted capability).
ktl::Result<uint32_t> dimension_of(uint32_t cap);

} // namespace mcpd::vec
