#pragma once
// The boot options that decide what is served: the test profiles some tools are served in (boot
// argument `profile=`), and whether this node joins a cluster (`cluster=`).

namespace mcpd {

// profile=conformance: the suite's fixtures (tools, resources, prompts, allowlists) are served.
bool conformance_profile();
// profile=faults: the misbehaving test tool is served (tools/fault/).
bool faults_profile();
// cluster=...: the cluster tools and cluster://members are served (the cluster service runs).
bool cluster_node();

} // namespace mcpd
