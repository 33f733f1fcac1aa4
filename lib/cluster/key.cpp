#include "key.h"

#include <crypto/hmac_sha256.h>

namespace cluster {

Key derive_key(std::string_view secret, std::string_view cluster_name) {
    crypto::HmacSha256 mac({ reinterpret_cast<const uint8_t*>(secret.data()), secret.size() });
    // The NUL keeps ("v1", "x") and ("v1x", "") apart should the label ever change.
    mac.update(std::string_view("basalt-cluster-v1"));
    const uint8_t separator = 0;
    mac.update(std::span<const uint8_t>(&separator, 1));
    mac.update(cluster_name);
    return mac.finish();
}

} // namespace cluster
