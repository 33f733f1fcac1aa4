#pragma once
// The cluster key: the only form in which a cluster's secret is kept, so a node's memory holds
// nothing that works for another cluster sharing the same operator secret.
#include <string_view>

#include <cluster/types.h>

namespace cluster {

// HMAC-SHA256(secret, "basalt-cluster-v1" || 0x00 || cluster_name).
Key derive_key(std::string_view secret, std::string_view cluster_name);

} // namespace cluster
