// Cluster membership system calls: what the cluster task knows, read through the Cluster
// capability (kernel/cluster/cluster_service.h).
#include "../cluster/cluster_service.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {
namespace {
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
constexpr uint64_t kMaxMembers = 64;
} // namespace

int64_t cluster_info(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t max = f.x[3];
    if (max > kMaxMembers || !buffers::writable(f.x[1], sizeof(cluster_abi::ClusterInfo)) ||
        (max && !buffers::writable(f.x[2], max * sizeof(cluster_abi::MemberInfo))))
        return err(ktl::Error::InvalidArgs);
    return clusterd::info(reinterpret_cast<cluster_abi::ClusterInfo*>(f.x[1]),
                          reinterpret_cast<cluster_abi::MemberInfo*>(f.x[2]), static_cast<uint32_t>(max));
}

int64_t cluster_ping(arch::TrapFrame& f, const kcap::Resolved&) {
    uint64_t len = f.x[2];
    if (len == 0 || len > 31 || !buffers::readable(f.x[1], len))
        return err(ktl::Error::InvalidArgs);
    return clusterd::ping({ reinterpret_cast<const char*>(f.x[1]), static_cast<size_t>(len) });
}

int64_t cluster_ping_result(arch::TrapFrame& f, const kcap::Resolved&) {
    if (f.x[1] > 0xffffffffull || !buffers::writable(f.x[2], sizeof(cluster_abi::PingInfo)))
        return err(ktl::Error::InvalidArgs);
    return clusterd::ping_result(static_cast<uint32_t>(f.x[1]), reinterpret_cast<cluster_abi::PingInfo*>(f.x[2]));
}

} // namespace handlers
