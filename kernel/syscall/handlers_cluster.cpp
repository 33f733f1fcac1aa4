// Cluster membership system calls: what the cluster task knows, read through the Cluster
// capability (kernel/cluster/cluster_service.h).
#include "../cluster/cluster_service.h"
#include "../cluster/fed_desk.h"
#include "../ipc/sync.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {
namespace {
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
constexpr uint64_t kMaxMembers = 64;
} // namespace

int64_t cluster_info(const kcap::Resolved&, Cap, cluster_abi::ClusterInfo* info, cluster_abi::MemberInfo* members,
                     uint64_t max) {
    if (max > kMaxMembers || !buffers::writable(info, sizeof(cluster_abi::ClusterInfo)) ||
        (max && !buffers::writable(members, max * sizeof(cluster_abi::MemberInfo))))
        return err(ktl::Error::InvalidArgs);
    return clusterd::info(info, members, static_cast<uint32_t>(max));
}

int64_t cluster_ping(const kcap::Resolved&, Cap, const char* name, uint64_t len) {
    if (len == 0 || len > 31 || !buffers::readable(name, len))
        return err(ktl::Error::InvalidArgs);
    return clusterd::ping({ name, static_cast<size_t>(len) });
}

int64_t cluster_ping_result(const kcap::Resolved&, Cap, uint64_t ping, cluster_abi::PingInfo* out) {
    if (ping > 0xffffffffull || !buffers::writable(out, sizeof(cluster_abi::PingInfo)))
        return err(ktl::Error::InvalidArgs);
    return clusterd::ping_result(static_cast<uint32_t>(ping), out);
}

int64_t cluster_replace(const kcap::Resolved&, Cap, uint64_t dead_ip, uint64_t with_ip) {
    if (dead_ip == 0 || with_ip == 0 || dead_ip > 0xffffffffull || with_ip > 0xffffffffull || dead_ip == with_ip)
        return err(ktl::Error::InvalidArgs);
    return clusterd::replace(static_cast<uint32_t>(dead_ip), static_cast<uint32_t>(with_ip));
}

int64_t fed_search(const kcap::Resolved&, Cap, const cluster_abi::FedQuery* query) {
    if (!buffers::readable(query, sizeof(cluster_abi::FedQuery)))
        return err(ktl::Error::InvalidArgs);
    const cluster_abi::FedQuery q = *query; // (read once: the caller's memory may change)
    bool valid = false;
    const size_t bytes = clusterd::fed::input_bytes(q, valid);
    const size_t filter_bytes = size_t(q.filter_count) * sizeof(uint64_t);
    if (!valid || (bytes > filter_bytes && !buffers::readable(q.vector, bytes - filter_bytes)) ||
        (filter_bytes != 0 && !buffers::readable(q.filter, filter_bytes)))
        return err(ktl::Error::InvalidArgs);
    if (!clusterd::running())
        return err(ktl::Error::NotReady);
    return clusterd::fed::submit(q, reinterpret_cast<const void*>(q.vector), reinterpret_cast<const void*>(q.filter));
}

int64_t fed_result(const kcap::Resolved&, Cap, uint64_t search, cluster_abi::FedResult* out) {
    if (search == 0 || search > 0xffffffffull || !buffers::writable(out, sizeof(cluster_abi::FedResult)))
        return err(ktl::Error::InvalidArgs);
    return finish(clusterd::fed::result(static_cast<uint32_t>(search), out));
}

} // namespace handlers
