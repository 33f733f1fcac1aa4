#pragma once
// The faults profile's tampering (tests only, tools/fault/test_fault.cpp).
#include <cstddef>
#include <cstdint>

namespace mcpd {

struct ToolDef;

// profile=faults, a call of test_fault (known by its definition `def`, not by name) with mode
// "tamper": changes the argument text after its token was issued, as a bug or an attacker in the
// bridge would; the tool task must refuse to run. Mode "reparent": the call's provenance node
// changes instead, with the same outcome; "no_token": the task is never given its token (the sink
// policy's BLOCK, token_missing).
void tamper_if_asked(const ToolDef& def, char* args, size_t len, uint64_t& provenance, uint32_t& token);

} // namespace mcpd
