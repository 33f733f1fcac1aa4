#include "net_task.h"

#include "../mm/kheap.h"

#include "arp_probe.h"
#include "datagram.h"
#include "endpoint.h"
#include "lwip_guard.h"
#include "net_stack.h"
#include "nic_netif.h"
#include "../bootargs.h"
#include "../cap/kcap.h"
#include "../ipc/sync.h"
#include "../log.h"
#include "../mm/kheap.h"
#include "../panic.h"
#include "../platform.h"
#include <abi/sys.h>

#include <drivers/nic.h>

#include <lwip/netif.h>
#include <lwip/timeouts.h>

namespace net {
namespace {

struct Args {
    Nic* devs[kMaxInterfaces] = {}; // vn0, vn1
    size_t count = 0;
    uint32_t wake = ~0u; // Event capability: signalled by every device's interrupt
};

constexpr uint64_t kMs = 1000000ull;
constexpr size_t kRxBudget = 32; // receive completions per round before timers get a turn
constexpr uint32_t kProbeTries = 3;

Args g_args;
ipc::Event g_wake(true);

int64_t wait_for_device(uint32_t wake, uint64_t timeout_ns) { return sys::event_wait(wake, timeout_ns); }

void on_probe_frame(void* ctx, const uint8_t* frame, size_t len) {
    arp_probe_match(*static_cast<ArpProbe*>(ctx), frame, len);
}

void run_arp_probe(const Args& a) {
    ArpProbe probe { 0x0a00020f, 0x0a000202 }; // 10.0.2.15 asks for 10.0.2.2 (QEMU user network)
    for (uint32_t attempt = 1; attempt <= kProbeTries && !probe.answered; ++attempt) {
        if (!arp_probe_send(*a.devs[0], probe)) {
            KLOG_WARN("netcheck: no transmit buffer");
            return;
        }
        uint64_t deadline = sys::clock_ns() + 500 * kMs;
        while (!probe.answered) {
            uint64_t now = sys::clock_ns();
            if (now >= deadline)
                break;
            wait_for_device(a.wake, deadline - now);
            a.devs[0]->receive(on_probe_frame, &probe, kRxBudget);
        }
    }
    auto s = a.devs[0]->counters();
    if (!probe.answered) {
        KLOG_ERROR("netcheck: no ARP reply from 10.0.2.2 (tx %llu, rx %llu, irqs %llu)",
                   static_cast<unsigned long long>(s.tx_frames), static_cast<unsigned long long>(s.rx_frames),
                   static_cast<unsigned long long>(s.irqs));
        return;
    }
    const uint8_t* m = probe.target_mac;
    KLOG_INFO("netcheck: 10.0.2.2 is at %02x:%02x:%02x:%02x:%02x:%02x (tx %llu, rx %llu, irqs %llu)", m[0], m[1], m[2],
              m[3], m[4], m[5], static_cast<unsigned long long>(s.tx_frames),
              static_cast<unsigned long long>(s.rx_frames), static_cast<unsigned long long>(s.irqs));
}

void drop_frame(void*, const uint8_t*, size_t) {}

// Without a stack the devices are still drained, so no receive ring stalls.
[[noreturn]] void run_without_stack(const Args& a) {
    for (;;) {
        wait_for_device(a.wake, 0);
        for (size_t i = 0; i < a.count; ++i) {
            a.devs[i]->receive(drop_frame, nullptr, kRxBudget);
            a.devs[i]->reclaim_tx();
        }
    }
}

// Frames in from one interface, its link followed; returns the receive completions taken and
// lowers `wake_ms` to when the device wants to be called again.
size_t service(Nic& dev, struct netif* netif, size_t index, uint32_t& wake_ms) {
    size_t taken = nic_netif_poll(netif, kRxBudget);
    const uint32_t nic_ms = dev.maintain(sys::clock_ns() / kMs); // the link, for a NIC with a PHY
    if (nic_ms < wake_ms)
        wake_ms = nic_ms;
    if (dev.link_up() != netif_is_link_up(netif)) {
        KLOG_INFO("net: vn%zu link %s", index, dev.link_up() ? "up" : "down");
        (dev.link_up() ? netif_set_link_up : netif_set_link_down)(netif);
    }
    return taken;
}

// The loop: frames in, lwIP timers, then sleep until a device interrupts or the next lwIP
// timeout is due. A full receive budget means more frames may wait: go round without sleeping
// (yielding to equal-priority tasks) instead.
int64_t task_main(void* arg) {
    const Args& a = *static_cast<const Args*>(arg);
    if (bootargs::get().netcheck)
        run_arp_probe(a);
    struct netif* netifs[kMaxInterfaces] = {};
    if (!stack_start(a.devs, a.count, netifs))
        run_without_stack(a);
    Endpoint& http = http_endpoint();
    if (http.port() && http.listen())
        KLOG_INFO("net: MCP over HTTP on port %u", http.port());
    for (;;) {
        size_t taken = 0;
        uint32_t nic_ms = Nic::kNever;
        for (size_t i = 0; i < a.count; ++i) {
            if (netifs[i]) {
                size_t n = service(*a.devs[i], netifs[i], i, nic_ms);
                taken = n > taken ? n : taken;
            } else { // an interface that could not start: drained all the same
                a.devs[i]->receive(drop_frame, nullptr, kRxBudget);
                a.devs[i]->reclaim_tx();
            }
        }
        sys_check_timeouts();
        drop_suspect();
        http.pump();
        Datagram::pump_all();
        if (taken == kRxBudget) {
            sys::yield();
            continue;
        }
        u32_t sleep_ms = sys_timeouts_sleeptime();
        if (nic_ms != Nic::kNever && (sleep_ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE || nic_ms < sleep_ms))
            sleep_ms = nic_ms;
        if (sleep_ms == 0)
            continue;
        // event_wait's 0 means "forever", which is what an empty timer list asks for.
        wait_for_device(a.wake, sleep_ms == SYS_TIMEOUTS_SLEEPTIME_INFINITE ? 0 : uint64_t(sleep_ms) * kMs);
    }
}

} // namespace

constexpr uint64_t kHeapLimit = Endpoint::kMaxStreams * Endpoint::kBlockBytes + 512 * 1024;

void start() {
    for (size_t i = 0; i < kMaxInterfaces && i < platform::kMaxNics; ++i)
        if (Nic* d = platform::nic(i))
            g_args.devs[g_args.count++] = d;
    if (g_args.count == 0)
        return;
    auto wake = kcap::register_object(kcap::ObjectType::Event, &g_wake);
    if (!wake)
        panic("cap: cannot register the net wake event");
    auto t = sched::create("net", task_main, &g_args, sched::CreateOptions { 17, true });
    if (!t)
        panic("sched: cannot create the net task: %s", ktl::error_name(t.error()));
    // Its heap is the endpoints' connections (one block each) and little else: capped, so
    // no number of connections can take the memory the rest of the kernel needs.
    kheap::set_limit(static_cast<uint16_t>((*t)->id), kHeapLimit);
    // Without its wake event the task could only spin: refuse to run it that way.
    auto slot = kcap::grant_existing(*t, *wake, kcap::kRead);
    if (!slot)
        panic("cap: cannot grant the net task its wake event: %s", ktl::error_name(slot.error()));
    g_args.wake = *slot;
    for (size_t i = 0; i < g_args.count; ++i)
        g_args.devs[i]->set_notify([](void*) { g_wake.signal(); }, nullptr);
    http_endpoint().set_net_wake([] { g_wake.signal(); });
    Datagram::set_net_wake([] { g_wake.signal(); });
}

} // namespace net
