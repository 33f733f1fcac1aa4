#pragma once
// A network endpoint: a TCP port the net task listens on, and the connections it accepted,
// served to another task through one NetEndpoint capability (system calls net_poll, net_recv,
// net_send, net_close). lwIP is touched only by the net task; the two sides meet in per-
// connection byte rings:
//  - received bytes are copied from lwIP's buffers into the connection's receive ring at once
//    (the ring holds a whole TCP window), and TCP's window reopens only as the task reads them
//    (tcp_recved), so a task that reads slowly throttles its peer through TCP flow control,
//    memory per connection stays bounded, and no connection holds lwIP's receive buffers;
//  - bytes the task sends go into the transmit ring; the net task hands them to TCP as the send
//    buffer allows.
// Whenever a connection changes (new, data in, room to send, peer closed, reset) it is marked
// and the serving task's event is signalled; net_poll returns the marked connections. One event
// and one poll for all connections keeps a server with hundreds of mostly idle connections at
// one task and no per-connection wake-ups.
//
// The syscall side runs with IRQs masked (system calls do); the net task's side masks them
// around every access to state the two share, so neither ever sees the other half-done.
#include <cstddef>
#include <cstdint>

#include <abi/net.h>

struct tcp_pcb;
struct pbuf;

namespace ipc {
class Event;
}

namespace net {

using abi::StreamEvent; // layout shared with tasks
namespace stream_flags = abi::stream_flags;

class Endpoint {
public:
    static constexpr uint32_t kMaxStreams = abi::kMaxStreams; // abi/net.h: tasks size their tables by it
    // Half-open (SYN-RECEIVED) connections the listener holds before a new SYN evicts the oldest
    // (kernel/net/tcp_syn_guard.cpp). A client's burst of new connections arrives as one batch of
    // SYNs, all of them handshakes about to complete: the backlog must hold a whole burst (a pool
    // of 50 opening at once, say), or the defence resets real clients; 16 did, for half of a
    // burst of 50. Under passt, the default user-mode network, a forwarded connection stays
    // half-open until its client first sends, so a client's idle connections wait here too: the
    // backlog holds about a table's worth (255, lwIP's largest). A flood fills any backlog; a
    // bigger one only gives a real client's handshake longer (until this many newer SYNs come).
    static constexpr uint32_t kListenBacklog = 255;
    // A connection's rings and state fill one 32 KiB heap block (kernel/mm/kheap: power-of-two
    // blocks), the receive ring a whole TCP window (TCP_WND, 11,680 bytes).
    static constexpr uint32_t kBlockBytes = 32 * 1024;
    static constexpr uint32_t kRxRing = 12 * 1024;
    static constexpr uint32_t kTxRing = 19 * 1024;
    // A connection owing bytes (in its ring or in TCP) to a peer that takes none of them for this
    // long is reset: a zero window held for ever would keep its memory and lwIP's.
    static constexpr uint64_t kSendTimeoutNs = 10'000'000'000ull;

    // Configuration before the net task runs: the port and the event signalled on changes.
    void configure(uint16_t port, ipc::Event* notify, uint32_t max_streams);
    uint16_t port() const { return m_port; }

    // --- net task side ---
    bool listen(); // binds and listens on the configured port (logged)
    void pump();   // moves bytes both ways and carries out closes
    void set_net_wake(void (*wake)()) { m_net_wake = wake; }
    struct Stream;
    void mark(Stream& s); // a change for the task: flag it and signal its event
    void cut_if_stalled(Stream& s);

    // --- system call side (IRQs masked) ---
    uint32_t poll(StreamEvent* out, uint32_t max); // marked connections, marks cleared
    int64_t recv(uint32_t handle, void* buf,
                 uint32_t cap); // bytes copied; 0: none now; -NotFound: closed by peer and drained
    int64_t send(uint32_t handle, const void* buf, uint32_t len); // bytes taken (may be fewer than len)
    int64_t close(uint32_t handle, bool abort);                   // the task is done with the connection

    struct Stats {
        uint64_t accepted = 0, refused = 0, open = 0, bytes_in = 0, bytes_out = 0;
        // Handshakes not yet complete (the listen backlog). passt, the default user-mode network,
        // completes a forwarded connection's handshake only when its client first sends, so an
        // idle client's connection waits here, not among the open ones.
        uint64_t half_open = 0;
        uint64_t send_timeouts = 0; // connections cut because the peer took nothing for 10 s
        uint64_t displaced = 0;     // silent connections cut to make room for new ones
    };
    Stats stats() const;

private:
    Stream* lookup(uint32_t handle);
    void release(Stream& s);
    void displace_silent(uint64_t now);
    void cut(Stream& s);
    static int8_t on_accept(void* arg, tcp_pcb* pcb, int8_t err);

    Stream* m_streams[kMaxStreams] = {};
    uint16_t m_gen[kMaxStreams] = {};
    uint32_t m_max = kMaxStreams;
    uint32_t m_poll_next = 0; // the slot the next poll starts from (round robin)
    uint16_t m_port = 0;
    ipc::Event* m_notify = nullptr;
    void (*m_net_wake)() = nullptr;
    tcp_pcb* m_listener = nullptr;
    Stats m_stats;
};

// The endpoint that serves MCP over HTTP (`http_port=`, default 8080; 0: none).
Endpoint& http_endpoint();

} // namespace net
