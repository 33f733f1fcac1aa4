#pragma once
// kernel://perf: where the time of the kernel's tools/calls goes, per stage of the pipeline
// (mcp/server/call_stages.h), for every transport together and for each one.
#include <cstddef>

#include <json/writer.h>
#include <mcp/server/call_stages.h>

namespace mcpd {

struct StageSource {
    const char* transport = "";
    const mcp::CallStages* stages = nullptr;
};

// Writes "unit", "stages" (each stage by name: calls, total_ns, mean_ns, max_ns, p50_ns, p99_ns,
// the sources' totals together) and "transports" (the same per source).
void write_perf(json::Writer& w, const StageSource* sources, size_t count);

} // namespace mcpd
