#pragma once
// The test profiles some tools are served in (boot argument `profile=`).

namespace mcpd {

// profile=conformance: the suite's fixtures (tools, resources, prompts, allowlists) are served.
bool conformance_profile();
// profile=faults: the misbehaving test tool is served (tools/fault/).
bool faults_profile();

} // namespace mcpd
