#pragma once
// A tool that misbehaves on purpose (boot argument profile=faults, tests only): it takes kernel
// heap and then faults, hangs past its stop, or spends its system-call budget, so tests can show
// from outside that the kernel answers at once and takes everything back.
#include <span>

#include <mcp/server/server.h>

namespace mcpd {

struct ToolImpl;

bool faults_profile();
// Empty outside the profile.
std::span<const mcp::Tool> fault_tools();
std::span<const ToolImpl> fault_tool_impls();
// profile=faults, test_fault with mode "tamper": changes the argument text after its token was
// issued, as a bug or an attacker in the bridge would; the tool task must refuse to run. Mode
// "reparent": the call's provenance node changes instead, with the same outcome; "no_token": the
// task is never given its token (the sink policy's BLOCK, token_missing).
void tamper_if_asked(const char* tool, char* args, size_t len, uint64_t& provenance, uint32_t& token);

} // namespace mcpd
