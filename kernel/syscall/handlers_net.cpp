// Network endpoint system calls: a task serves TCP connections through the one NetEndpoint
// capability it was granted; the net task owns the stack (kernel/net/endpoint.h).
#include "../net/datagram.h"
#include "../net/endpoint.h"
#include "../ipc/sync.h"
#include "../sched/scheduler.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {
namespace {

constexpr uint64_t kMaxIo = 1u << 20;
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
net::Endpoint& endpoint(const kcap::Resolved& o) { return *static_cast<net::Endpoint*>(o.object); }

} // namespace

int64_t net_poll(const kcap::Resolved& o, Cap, net::StreamEvent* out, uint64_t max) {
    if (max == 0 || max > net::Endpoint::kMaxStreams || !buffers::writable(out, max * sizeof(net::StreamEvent)))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).poll(out, static_cast<uint32_t>(max));
}

int64_t net_recv(const kcap::Resolved& o, Cap, uint32_t handle, void* buffer, uint64_t cap) {
    if (cap == 0 || cap > kMaxIo || !buffers::writable(buffer, cap))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).recv(handle, buffer, static_cast<uint32_t>(cap));
}

int64_t net_send(const kcap::Resolved& o, Cap, uint32_t handle, const void* data, uint64_t len) {
    if (len > kMaxIo || (len && !buffers::readable(data, len)))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).send(handle, data, static_cast<uint32_t>(len));
}

int64_t net_close(const kcap::Resolved& o, Cap, uint32_t handle, uint64_t reset) {
    if (reset > 1)
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).close(handle, reset == 1);
}

// --- UDP endpoints (kernel/net/datagram.h) ---

namespace {
net::Datagram& datagram(const kcap::Resolved& o) { return *static_cast<net::Datagram*>(o.object); }
} // namespace

int64_t udp_open(const kcap::Resolved&, Cap, uint64_t port) {
    if (port == 0 || port > 65535)
        return err(ktl::Error::InvalidArgs);
    auto ep = net::Datagram::open(static_cast<uint16_t>(port));
    if (!ep)
        return err(ep.error());
    // Owned by the caller: it closes when the task ends, however it ends.
    auto slot = kcap::create_owned_and_grant(sched::current(), kcap::ObjectType::Datagram, *ep,
                                             kcap::kRead | kcap::kWrite | kcap::kGrant | kcap::kRevoke);
    if (!slot) {
        (*ep)->close();
        return err(slot.error());
    }
    return *slot;
}

int64_t udp_send(const kcap::Resolved& o, Cap, uint64_t ip, uint64_t port, const void* data, uint64_t len) {
    if (ip > 0xffffffffull || port == 0 || port > 65535 || len > net::Datagram::kMaxPayload ||
        (len && !buffers::readable(data, len)))
        return err(ktl::Error::InvalidArgs);
    return datagram(o).send(static_cast<uint32_t>(ip), static_cast<uint16_t>(port), data, static_cast<uint32_t>(len));
}

int64_t udp_recv(const kcap::Resolved& o, Cap, void* buffer, uint64_t cap, net::DatagramFrom* from) {
    if (cap == 0 || cap > net::Datagram::kMaxPayload || !buffers::writable(buffer, cap) ||
        (from && !buffers::writable(from, sizeof(net::DatagramFrom))))
        return err(ktl::Error::InvalidArgs);
    return datagram(o).recv(buffer, static_cast<uint32_t>(cap), from);
}

// Until a datagram waits on any of the node's endpoints (the cluster task owns both and reads
// both), a queued replicated change wakes it (replication_desk.h), or the timeout.
int64_t udp_wait(const kcap::Resolved& o, Cap, uint64_t timeout_ns) {
    if (datagram(o).readable() || net::Datagram::any_readable())
        return 0;
    return finish(datagram(o).event().wait(deadline_after(timeout_ns)));
}

} // namespace handlers
