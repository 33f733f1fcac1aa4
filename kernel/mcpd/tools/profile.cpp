#include "profile.h"

#include "../../bootargs.h"

namespace mcpd {

bool conformance_profile() { return bootargs::get().profile == "conformance"; }
bool faults_profile() { return bootargs::get().profile == "faults"; }

} // namespace mcpd
