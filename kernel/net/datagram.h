#pragma once
// UDP endpoints opened at run time (system call udp_open on the NetStack capability), each
// served to its task through one Datagram capability (udp_send, udp_recv, udp_wait). As with
// the TCP endpoint (endpoint.h), lwIP is touched only by the net task: the two sides meet in
// two bounded rings of whole datagrams, the receive ring filled by lwIP's callback and the
// transmit ring drained by the net task. A full receive ring drops (UDP promises nothing and a
// flood must not grow memory); a full transmit ring refuses the send (-Full) so the task knows.
//
// The endpoints are a small fixed table that is never freed: a capability that outlives its
// endpoint (closed when the owning task ended) finds a closed one, never freed memory.
#include <cstddef>
#include <cstdint>

#include <abi/net.h>

#include <ktl/result.h>

struct udp_pcb;
struct pbuf;

namespace ipc {
class Event;
}

namespace net {

using abi::DatagramFrom; // udp_recv fills it in

class Datagram {
public:
    static constexpr uint32_t kMaxPayload = 1472; // one Ethernet frame, no IP fragments
    static constexpr uint32_t kRxSlots = 24;
    static constexpr uint32_t kTxSlots = 16;
    static constexpr uint32_t kMaxEndpoints = 2;

    struct Slot; // one datagram of a ring

    // --- system call side (IRQs masked) ---
    // A new endpoint on `port` (not 0, not DHCP's 67/68, not one already open) for task `owner`;
    // the net task binds it on its next round.
    static ktl::Result<Datagram*> open(uint16_t port);
    uint32_t index() const;
    int64_t send(uint32_t ip, uint16_t port, const void* data, uint32_t len); // len, or -Full / -InvalidArgs
    // The oldest datagram into buf (at most cap bytes; a longer one is dropped with -Truncated);
    // its length, or -WouldBlock when none waits.
    int64_t recv(void* buf, uint32_t cap, DatagramFrom* from);
    bool readable() const;
    // The endpoints' one wake-up (udp_wait): signalled by a datagram on any endpoint and by
    // wake_waiter(); any_readable() says whether a datagram waits on any of them.
    ipc::Event& event();
    static void wake_waiter();
    static bool any_readable();
    void close(); // the capability's object died: the net task lets the port go
    uint16_t port() const { return m_port; }

    struct Stats {
        uint64_t rx = 0, tx = 0;
        uint64_t rx_dropped = 0; // the receive ring was full
        uint64_t tx_refused = 0; // the transmit ring was full
        uint64_t tx_errors = 0;  // lwIP could not send (no route, no memory)
    };
    Stats stats() const;

    // --- net task side ---
    static void set_net_wake(void (*wake)());
    static void pump_all(); // binds new endpoints, sends what is queued, releases closed ones
    void deliver(pbuf* p, uint32_t ip, uint16_t port); // lwIP's receive callback

private:
    enum class State : uint8_t { Free, Opening, Open, Failed, Closing };
    void pump();
    Slot& rx_slot(uint32_t i) const;
    Slot& tx_slot(uint32_t i) const;

    State m_state = State::Free;
    uint16_t m_port = 0;
    udp_pcb* m_pcb = nullptr;
    Slot* m_slots = nullptr; // kRxSlots then kTxSlots, one heap block
    uint32_t m_rx_head = 0, m_rx_tail = 0, m_tx_head = 0, m_tx_tail = 0;
    Stats m_stats;
};

} // namespace net
