// basalt-fabric: the swarm's network. Each node's NIC is a QEMU `-netdev dgram` whose remote is
// this program's port for that node (DIR/fabric-N.sock); frames it receives there are forwarded
// by the switchboard (shortest live path, impairments, a seeded generator) and sent, when due, to
// the destination nodes' own sockets (DIR/node-N.sock). A control socket (DIR/control.sock, JSON
// lines) changes links, nodes and partitions and reads counters; `./basalt swarm` drives it.
//
// With --udp HOST:BASE, node N's port is also UDP port BASE+N on HOST (IPv4), for a QEMU whose
// `-netdev dgram` has an inet remote, e.g. on another machine. The port belongs to the first
// address and port that send to it: frames from any other source are dropped (and counted), so
// nobody else can speak as node N or take its traffic, until the node is set down through the
// control socket (killed: its restart binds afresh). HOST should still be an address only the
// swarm's machines reach: whoever speaks first owns the port.
//
//   basalt-fabric --dir DIR --nodes N --topology mesh|ring|star|tree|line|FILE.json [--seed S]
//                 [--events FILE] [--udp HOST:BASE]
//
// Ends on SIGTERM/SIGINT or {"cmd":"quit"}, removing its sockets.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json/json.h>

#include "switchboard.h"
#include "topology.h"

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

constexpr size_t kMaxFrame = 9216;
constexpr size_t kMaxQueued = 100000; // frames in flight; beyond it a copy is dropped and counted
constexpr size_t kMaxBacklog = 256;   // frames held for one node whose socket is full; beyond, dropped
constexpr size_t kMaxClients = 8;
constexpr size_t kMaxControlLine = 64 * 1024;

uint64_t now_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
}

sockaddr_un address(const std::string& path) {
    sockaddr_un a {};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    return a;
}

struct Pending {
    uint64_t due_us;
    uint64_t order; // ties keep the order frames were sent in
    uint32_t to;
    std::vector<uint8_t> frame;
    bool operator>(const Pending& o) const { return due_us != o.due_us ? due_us > o.due_us : order > o.order; }
};

struct Client {
    int fd;
    std::string in;
};

// Node N's way in and out: its unix socket pair, and its UDP port when --udp is on.
struct Port {
    int unix_fd = -1;
    sockaddr_un node {}; // the node's own socket (DIR/node-N.sock), where its frames go
    int udp_fd = -1;
    sockaddr_in udp_peer {};  // the source the UDP port is bound to
    bool udp_bound = false;   // udp_peer is set: no other source is heard
    uint64_t udp_refused = 0; // frames from other sources
    bool via_udp = false;     // the node's last frame came over UDP: answer there
    // Frames its socket had no room for yet (a unix datagram socket queues only
    // net.unix.max_dgram_qlen, 10 by default, while its QEMU waits for a core): sent in order
    // before any later one, as a switch's output buffer would.
    std::deque<std::vector<uint8_t>> backlog;
};

bool same_source(const sockaddr_in& a, const sockaddr_in& b) {
    return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

struct UdpBind {
    in_addr host {};
    uint16_t base = 0; // 0: no UDP ports
};

class Fabric {
public:
    Fabric(std::string dir, fabric::Topology topology, uint64_t seed, std::FILE* events, UdpBind udp)
        : m_dir(std::move(dir)), m_topology(std::move(topology)), m_board(m_topology, seed), m_events(events),
          m_udp(udp) {
        m_board.keep_log(events != nullptr);
    }

    bool open_sockets() {
        for (uint32_t n = 0; n < m_topology.nodes(); ++n) {
            Port port;
            port.unix_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            port.node = address(m_dir + "/node-" + std::to_string(n) + ".sock");
            std::string path = m_dir + "/fabric-" + std::to_string(n) + ".sock";
            unlink(path.c_str());
            sockaddr_un a = address(path);
            if (port.unix_fd < 0 || bind(port.unix_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                std::fprintf(stderr, "fabric: cannot bind %s: %s\n", path.c_str(), std::strerror(errno));
                return false;
            }
            m_paths.push_back(path);
            if (m_udp.base) {
                port.udp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                sockaddr_in in {};
                in.sin_family = AF_INET;
                in.sin_addr = m_udp.host;
                in.sin_port = htons(static_cast<uint16_t>(m_udp.base + n));
                if (port.udp_fd < 0 || bind(port.udp_fd, reinterpret_cast<sockaddr*>(&in), sizeof in) != 0) {
                    std::fprintf(stderr, "fabric: cannot bind UDP port %u: %s\n", m_udp.base + n, std::strerror(errno));
                    m_ports.push_back(port);
                    return false;
                }
            }
            m_ports.push_back(port);
        }
        m_control = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        std::string path = m_dir + "/control.sock";
        unlink(path.c_str());
        sockaddr_un a = address(path);
        if (m_control < 0 || bind(m_control, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
            listen(m_control, 4) != 0) {
            std::fprintf(stderr, "fabric: cannot listen on %s: %s\n", path.c_str(), std::strerror(errno));
            return false;
        }
        m_paths.push_back(path);
        return true;
    }

    void close_sockets() {
        for (const Port& p : m_ports) {
            if (p.unix_fd >= 0)
                close(p.unix_fd);
            if (p.udp_fd >= 0)
                close(p.udp_fd);
        }
        for (auto& c : m_clients)
            close(c.fd);
        if (m_control >= 0)
            close(m_control);
        for (auto& p : m_paths)
            unlink(p.c_str());
    }

    void run() {
        std::vector<uint8_t> buf(kMaxFrame);
        while (!g_stop && !m_quit) {
            // Each node's sockets first (unix, then UDP when on), then control, then clients.
            std::vector<pollfd> fds;
            std::vector<std::pair<uint32_t, bool>> owner; // (node, is UDP) per port entry
            for (uint32_t n = 0; n < m_ports.size(); ++n) {
                fds.push_back({ m_ports[n].unix_fd, POLLIN, 0 });
                owner.push_back({ n, false });
                if (m_ports[n].udp_fd >= 0) {
                    fds.push_back({ m_ports[n].udp_fd, POLLIN, 0 });
                    owner.push_back({ n, true });
                }
            }
            const size_t control_at = fds.size();
            fds.push_back({ m_control, POLLIN, 0 });
            for (auto& c : m_clients)
                fds.push_back({ c.fd, POLLIN, 0 });
            int timeout = -1;
            if (!m_queue.empty()) {
                uint64_t now = now_us(), due = m_queue.top().due_us;
                timeout = due <= now ? 0 : static_cast<int>((due - now + 999) / 1000);
            }
            if (any_backlog() && timeout != 0) // (a full socket says nothing when it has room again)
                timeout = 1;
            int ready = poll(fds.data(), fds.size(), timeout);
            if (ready < 0 && errno != EINTR)
                break;
            for (size_t i = 0; i < control_at; ++i)
                if (fds[i].revents & POLLIN)
                    receive(owner[i].first, owner[i].second, buf);
            // The clients polled this round (an accepted one joins the next round).
            const size_t polled = fds.size() - control_at - 1;
            for (size_t i = 0; i < polled && i < m_clients.size(); ++i)
                if (fds[control_at + 1 + i].revents & (POLLIN | POLLHUP))
                    read_client(i);
            if (fds[control_at].revents & POLLIN)
                accept_client();
            m_clients.erase(std::remove_if(m_clients.begin(), m_clients.end(),
                                           [](const Client& c) { return c.fd < 0; }),
                            m_clients.end());
            deliver_due();
        }
    }

private:
    void receive(uint32_t n, bool udp, std::vector<uint8_t>& buf) {
        Port& port = m_ports[n];
        for (int burst = 0; burst < 256; ++burst) {
            sockaddr_in from {};
            socklen_t from_len = sizeof from;
            ssize_t len = udp ? recvfrom(port.udp_fd, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from),
                                         &from_len)
                              : recv(port.unix_fd, buf.data(), buf.size(), 0);
            if (len <= 0)
                break;
            if (udp) {
                if (from.sin_family != AF_INET || (port.udp_bound && !same_source(from, port.udp_peer))) {
                    ++port.udp_refused;
                    continue;
                }
                port.udp_peer = from;
                port.udp_bound = true;
            }
            port.via_udp = udp;
            forward(n, buf.data(), static_cast<size_t>(len));
        }
    }

    void forward(uint32_t from, const uint8_t* frame, size_t len) {
        for (const auto& d : m_board.send(from, frame, len, now_us())) {
            if (m_queue.size() >= kMaxQueued) {
                ++m_overflow;
                continue;
            }
            m_queue.push({ d.due_us, m_order++, d.to, std::vector<uint8_t>(frame, frame + len) });
        }
        if (m_events) { // the decisions, as they are made: a run with the same seed writes the same lines
            std::string text = m_board.take_log_text();
            std::fwrite(text.data(), 1, text.size(), m_events);
        }
    }

    // One frame to a node's socket: false when the socket is full (try again later).
    bool send_to(Port& port, const std::vector<uint8_t>& frame) {
        ssize_t sent;
        if (port.via_udp) {
            sent = sendto(port.udp_fd, frame.data(), frame.size(), MSG_DONTWAIT,
                          reinterpret_cast<const sockaddr*>(&port.udp_peer), sizeof port.udp_peer);
        } else {
            sent = sendto(port.unix_fd, frame.data(), frame.size(), MSG_DONTWAIT,
                          reinterpret_cast<const sockaddr*>(&port.node), sizeof port.node);
        }
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
            return false;
        // A node that is not running (or has no socket yet) simply misses the frame.
        if (sent < 0) {
            ++m_undeliverable;
            port.backlog.clear(); // (nobody there to take them)
        } else {
            ++m_delivered;
        }
        return true;
    }

    void hold(Port& port, std::vector<uint8_t> frame) {
        if (port.backlog.size() >= kMaxBacklog) {
            ++m_backlog_dropped;
            return;
        }
        ++m_held;
        port.backlog.push_back(std::move(frame));
    }

    bool any_backlog() const {
        for (const Port& p : m_ports)
            if (!p.backlog.empty())
                return true;
        return false;
    }

    void flush_backlogs() {
        for (Port& port : m_ports)
            while (!port.backlog.empty() && send_to(port, port.backlog.front()))
                if (!port.backlog.empty())
                    port.backlog.pop_front();
    }

    void deliver_due() {
        flush_backlogs();
        const uint64_t now = now_us();
        while (!m_queue.empty() && m_queue.top().due_us <= now) {
            const Pending& p = m_queue.top();
            Port& port = m_ports[p.to];
            if (!port.backlog.empty() || !send_to(port, p.frame))
                hold(port, p.frame);
            m_queue.pop();
        }
    }

    void accept_client() {
        int fd = accept4(m_control, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (m_clients.size() >= kMaxClients) {
            close(fd);
            return;
        }
        m_clients.push_back({ fd, {} });
    }

    // The whole answer (a big swarm's stats outgrow the socket's buffer): the client reads a
    // line at a time, so a cut one would leave it waiting. A client that takes nothing for a
    // second is dropped rather than stalling the fabric.
    static bool send_all(int fd, const std::string& text) {
        size_t sent = 0;
        while (sent < text.size()) {
            ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
            if (n > 0) {
                sent += static_cast<size_t>(n);
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR)
                return false;
            pollfd p { fd, POLLOUT, 0 };
            if (poll(&p, 1, 1000) <= 0)
                return false;
        }
        return true;
    }

    void read_client(size_t i) {
        Client& c = m_clients[i];
        char chunk[4096];
        ssize_t n = recv(c.fd, chunk, sizeof chunk, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            close(c.fd);
            c.fd = -1;
            return;
        }
        c.in.append(chunk, static_cast<size_t>(n));
        size_t nl;
        while ((nl = c.in.find('\n')) != std::string::npos) {
            std::string line = c.in.substr(0, nl);
            c.in.erase(0, nl + 1);
            std::string answer = command(line) + "\n";
            if (!send_all(c.fd, answer)) {
                close(c.fd);
                c.fd = -1;
                return;
            }
        }
        if (c.in.size() > kMaxControlLine) {
            close(c.fd);
            c.fd = -1;
        }
    }

    static std::string error(const char* why) { return std::string("{\"ok\":false,\"error\":\"") + why + "\"}"; }

    bool node_arg(json::Value v, uint32_t& out) const {
        auto n = v.as_uint64();
        if (!n || *n >= m_topology.nodes())
            return false;
        out = static_cast<uint32_t>(*n);
        return true;
    }

    std::string command(const std::string& line) {
        std::vector<json::Node> arena(json::value_bound(line));
        auto doc = json::Document::parse(line, arena);
        if (!doc)
            return error("not a JSON object");
        json::Value root = doc->root();
        json::Value cmd = root.find("cmd");
        if (cmd.string_equals("link")) {
            uint32_t a, b;
            if (!node_arg(root.find("a"), a) || !node_arg(root.find("b"), b))
                return error("a and b must be nodes");
            const fabric::Link* link = m_topology.link(a, b);
            if (!link)
                return error("no such link in the topology");
            fabric::LinkState state = link->state; // applied whole, once every field is valid
            if (json::Value s = root.find("state"); s.valid()) {
                if (!s.string_equals("up") && !s.string_equals("down"))
                    return error("state must be up or down");
                state.up = s.string_equals("up");
            }
            auto probability = [&](const char* key, double& field) {
                if (json::Value v = root.find(key); v.valid()) {
                    auto d = v.as_double();
                    if (!d || *d < 0 || *d > 1)
                        return false;
                    field = *d;
                }
                return true;
            };
            auto micros = [&](const char* key, uint32_t& field) {
                if (json::Value v = root.find(key); v.valid()) {
                    auto ms = v.as_uint64();
                    if (!ms || *ms > 60000)
                        return false;
                    field = static_cast<uint32_t>(*ms * 1000);
                }
                return true;
            };
            if (!probability("loss", state.loss) || !probability("dup", state.dup) ||
                !micros("delay_ms", state.delay_us) || !micros("jitter_ms", state.jitter_us))
                return error("loss and dup are 0..1, delay_ms and jitter_ms 0..60000");
            if (json::Value v = root.find("rate_kbps"); v.valid()) {
                auto kbps = v.as_uint64();
                if (!kbps || *kbps > 10'000'000)
                    return error("rate_kbps is 0 (unlimited) .. 10000000");
                state.rate_kbps = static_cast<uint32_t>(*kbps);
            }
            m_topology.set_link(a, b, state);
            return "{\"ok\":true}";
        }
        if (cmd.string_equals("node")) {
            uint32_t n;
            if (!node_arg(root.find("n"), n))
                return error("n must be a node");
            json::Value s = root.find("state");
            if (s.string_equals("up"))
                m_topology.set_node_state(n, fabric::NodeState::Up);
            else if (s.string_equals("paused"))
                m_topology.set_node_state(n, fabric::NodeState::Paused);
            else if (s.string_equals("down")) {
                m_topology.set_node_state(n, fabric::NodeState::Down);
                m_ports[n].udp_bound = false; // killed: its restart may come from another port
            } else
                return error("state must be up, paused or down");
            return "{\"ok\":true}";
        }
        if (cmd.string_equals("partition")) {
            std::vector<std::vector<uint32_t>> groups;
            json::Value g = root.find("groups");
            for (json::Value group = g.first(); group.valid(); group = group.next_sibling()) {
                groups.emplace_back();
                for (json::Value n = group.first(); n.valid(); n = n.next_sibling()) {
                    uint32_t node;
                    if (!node_arg(n, node))
                        return error("groups hold node numbers");
                    groups.back().push_back(node);
                }
            }
            if (groups.size() < 2)
                return error("a partition needs two groups or more");
            m_topology.partition(groups);
            return "{\"ok\":true}";
        }
        if (cmd.string_equals("heal")) {
            m_topology.heal();
            return "{\"ok\":true}";
        }
        if (cmd.string_equals("stats"))
            return stats();
        if (cmd.string_equals("quit")) {
            m_quit = true;
            return "{\"ok\":true}";
        }
        return error("cmd must be link, node, partition, heal, stats or quit");
    }

    std::string stats() const {
        std::ostringstream o;
        o << "{\"ok\":true,\"nodes\":" << m_topology.nodes() << ",\"delivered\":" << m_delivered
          << ",\"undeliverable\":" << m_undeliverable << ",\"overflow\":" << m_overflow << ",\"held\":" << m_held
          << ",\"backlog_dropped\":" << m_backlog_dropped << ",\"queued\":" << m_queue.size()
          << ",\"partitioned\":" << (m_topology.partitioned() ? "true" : "false") << ",\"links\":[";
        bool first = true;
        for (const auto& l : m_topology.links()) {
            auto it = m_board.counters().find({ l.a, l.b });
            fabric::Switchboard::LinkCounters c = it == m_board.counters().end() ? fabric::Switchboard::LinkCounters {}
                                                                                 : it->second;
            o << (first ? "" : ",") << "{\"a\":" << l.a << ",\"b\":" << l.b
              << ",\"up\":" << (l.state.up ? "true" : "false") << ",\"frames\":" << c.frames << ",\"lost\":" << c.lost
              << ",\"duplicated\":" << c.duplicated << ",\"queue_drops\":" << c.queue_drops
              << ",\"loss\":" << l.state.loss << ",\"dup\":" << l.state.dup
              << ",\"delay_ms\":" << l.state.delay_us / 1000 << ",\"jitter_ms\":" << l.state.jitter_us / 1000
              << ",\"rate_kbps\":" << l.state.rate_kbps << "}";
            first = false;
        }
        o << "],\"node_states\":[";
        for (uint32_t n = 0; n < m_topology.nodes(); ++n) {
            fabric::NodeState s = m_topology.node_state(n);
            o << (n ? "," : "")
              << (s == fabric::NodeState::Up       ? "\"up\""
                  : s == fabric::NodeState::Paused ? "\"paused\""
                                                   : "\"down\"");
        }
        // How each node is attached: "unix", or "udp A.B.C.D:PORT" (the peer it last heard from there).
        o << "],\"node_ports\":[";
        for (uint32_t n = 0; n < m_ports.size(); ++n) {
            const Port& p = m_ports[n];
            char peer[INET_ADDRSTRLEN] = "";
            if (p.via_udp)
                inet_ntop(AF_INET, &p.udp_peer.sin_addr, peer, sizeof peer);
            o << (n ? "," : "") << "\"";
            if (p.via_udp)
                o << "udp " << peer << ":" << ntohs(p.udp_peer.sin_port);
            else
                o << "unix";
            o << "\"";
        }
        o << "],\"node_udp_refused\":[";
        for (uint32_t n = 0; n < m_ports.size(); ++n)
            o << (n ? "," : "") << m_ports[n].udp_refused;
        o << "],\"macs\":" << m_board.macs() << ",\"macs_evicted\":" << m_board.macs_evicted() << "}";
        return o.str();
    }

    std::string m_dir;
    fabric::Topology m_topology;
    fabric::Switchboard m_board;
    std::vector<Port> m_ports;
    std::vector<std::string> m_paths;
    int m_control = -1;
    std::vector<Client> m_clients;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> m_queue;
    uint64_t m_order = 0, m_delivered = 0, m_undeliverable = 0, m_overflow = 0;
    uint64_t m_held = 0, m_backlog_dropped = 0; // frames that waited for a full socket; dropped past kMaxBacklog
    bool m_quit = false;
    std::FILE* m_events = nullptr;
    UdpBind m_udp;
};

int usage() {
    std::fprintf(stderr,
                 "usage: basalt-fabric --dir DIR --nodes N --topology mesh|ring|star|tree|line|FILE.json [--seed S] "
                 "[--events FILE] [--udp HOST:BASE]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::string dir, topology;
    uint32_t nodes = 0;
    uint64_t seed = 1;
    std::string events;
    UdpBind udp;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string opt = argv[i], val = argv[i + 1];
        if (opt == "--dir")
            dir = val;
        else if (opt == "--topology")
            topology = val;
        else if (opt == "--nodes")
            nodes = static_cast<uint32_t>(std::strtoul(val.c_str(), nullptr, 10));
        else if (opt == "--seed")
            seed = std::strtoull(val.c_str(), nullptr, 10);
        else if (opt == "--events")
            events = val;
        else if (opt == "--udp") {
            size_t colon = val.rfind(':');
            unsigned long base = colon == std::string::npos ? 0 : std::strtoul(val.c_str() + colon + 1, nullptr, 10);
            if (colon == std::string::npos || inet_pton(AF_INET, val.substr(0, colon).c_str(), &udp.host) != 1 ||
                base == 0 || base > 65535) {
                std::fprintf(stderr, "fabric: --udp wants HOST:BASE (an IPv4 address and a port), not '%s'\n",
                             val.c_str());
                return 2;
            }
            udp.base = static_cast<uint16_t>(base);
        } else
            return usage();
    }
    if (argc % 2 == 0 || dir.empty() || topology.empty())
        return usage();
    auto t = [&]() -> ktl::Result<fabric::Topology> {
        if (topology.size() > 5 && topology.substr(topology.size() - 5) == ".json") {
            std::ifstream f(topology);
            std::stringstream text;
            text << f.rdbuf();
            return fabric::Topology::parse(text.str());
        }
        return fabric::Topology::make(topology, nodes);
    }();
    if (!t) {
        std::fprintf(stderr, "fabric: bad topology '%s' (%s)\n", topology.c_str(), ktl::error_name(t.error()));
        return 2;
    }
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    std::signal(SIGPIPE, SIG_IGN);
    std::FILE* events_file = nullptr;
    if (!events.empty() && !(events_file = std::fopen(events.c_str(), "w"))) {
        std::fprintf(stderr, "fabric: cannot write %s\n", events.c_str());
        return 2;
    }
    if (udp.base && udp.base + uint64_t(t->nodes()) - 1 > 65535) {
        std::fprintf(stderr, "fabric: --udp base %u leaves no room for %u nodes\n", udp.base, t->nodes());
        return 2;
    }
    Fabric fabric(dir, std::move(*t), seed, events_file, udp);
    if (!fabric.open_sockets()) {
        fabric.close_sockets();
        return 1;
    }
    std::fprintf(stderr, "fabric: %s, ready\n", topology.c_str());
    fabric.run();
    fabric.close_sockets();
    if (events_file)
        std::fclose(events_file);
    return 0;
}
