#include "profile.h"

#include "../../bootargs.h"

namespace mcpd {

bool conformance_profile() { return bootargs::get().profile == "conformance"; }
bool faults_profile() { return bootargs::get().profile == "faults"; }
// The cluster service's own test (clusterd::configured), read from the same boot option.
bool cluster_node() { return !bootargs::get().cluster.empty(); }

} // namespace mcpd
