#pragma once
// kernel://composition: the kernel's composition table (composition.h) as JSON, the table the
// kernel granted every task's capabilities from at boot.
#include <json/writer.h>

namespace mcpd {

// Writes "tasks" (each task the table knows, as kernel_tasks names it, and on which boots it runs)
// and "grants" (one row per task and object held: type and rights named as kernel_caps names them).
void write_composition(json::Writer& w);

} // namespace mcpd
