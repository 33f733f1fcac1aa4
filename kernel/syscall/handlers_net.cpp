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

int64_t net_poll(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t max = f.x[2];
    if (max == 0 || max > net::Endpoint::kMaxStreams || !buffers::writable(f.x[1], max * sizeof(net::StreamEvent)))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).poll(reinterpret_cast<net::StreamEvent*>(f.x[1]), static_cast<uint32_t>(max));
}

int64_t net_recv(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t cap = f.x[3];
    if (cap == 0 || cap > kMaxIo || !buffers::writable(f.x[2], cap))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).recv(static_cast<uint32_t>(f.x[1]), reinterpret_cast<void*>(f.x[2]), static_cast<uint32_t>(cap));
}

int64_t net_send(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t len = f.x[3];
    if (len > kMaxIo || (len && !buffers::readable(f.x[2], len)))
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).send(static_cast<uint32_t>(f.x[1]), reinterpret_cast<const void*>(f.x[2]), static_cast<uint32_t>(len));
}

int64_t net_close(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (f.x[2] > 1)
        return err(ktl::Error::InvalidArgs);
    return endpoint(o).close(static_cast<uint32_t>(f.x[1]), f.x[2] == 1);
}

// --- UDP endpoints (kernel/net/datagram.h) ---

namespace {
net::Datagram& datagram(const kcap::Resolved& o) { return *static_cast<net::Datagram*>(o.object); }
} // namespace

int64_t udp_open(arch::TrapFrame& f, const kcap::Resolved&) {
    if (f.x[1] == 0 || f.x[1] > 65535)
        return err(ktl::Error::InvalidArgs);
    auto ep = net::Datagram::open(static_cast<uint16_t>(f.x[1]));
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

int64_t udp_send(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t len = f.x[4];
    if (f.x[1] > 0xffffffffull || f.x[2] == 0 || f.x[2] > 65535 || len > net::Datagram::kMaxPayload ||
        (len && !buffers::readable(f.x[3], len)))
        return err(ktl::Error::InvalidArgs);
    return datagram(o).send(static_cast<uint32_t>(f.x[1]), static_cast<uint16_t>(f.x[2]),
                            reinterpret_cast<const void*>(f.x[3]), static_cast<uint32_t>(len));
}

int64_t udp_recv(arch::TrapFrame& f, const kcap::Resolved& o) {
    uint64_t cap = f.x[2];
    if (cap == 0 || cap > net::Datagram::kMaxPayload || !buffers::writable(f.x[1], cap) ||
        (f.x[3] && !buffers::writable(f.x[3], sizeof(net::DatagramFrom))))
        return err(ktl::Error::InvalidArgs);
    return datagram(o).recv(reinterpret_cast<void*>(f.x[1]), static_cast<uint32_t>(cap),
                            reinterpret_cast<net::DatagramFrom*>(f.x[3]));
}

int64_t udp_wait(arch::TrapFrame& f, const kcap::Resolved& o) {
    if (datagram(o).readable())
        return 0;
    return finish(datagram(o).event().wait(deadline_after(f.x[1])));
}

} // namespace handlers
