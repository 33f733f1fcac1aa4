// basalt-fabric: the swarm's network. Each node's NIC is a QEMU `-netdev dgram` whose remote is
// this program's port for that node (DIR/fabric-N.sock); frames it receives there are forwarded
// by the switchboard (shortest live path, impairments, a seeded generator) and sent, when due, to
// the destination nodes' own sockets (DIR/node-N.sock). A control socket (DIR/control.sock, JSON
// lines) changes links, nodes and partitions and reads counters; `./basalt swarm` drives it.
//
//   basalt-fabric --dir DIR --nodes N --topology mesh|ring|star|tree|line|FILE.json [--seed S] [--events FILE]
//
// Ends on SIGTERM/SIGINT or {"cmd":"quit"}, removing its sockets.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

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

class Fabric {
public:
    Fabric(std::string dir, fabric::Topology topology, uint64_t seed, std::FILE* events)
        : m_dir(std::move(dir)), m_topology(std::move(topology)), m_board(m_topology, seed), m_events(events) {
        m_board.keep_log(events != nullptr);
    }

    bool open_sockets() {
        for (uint32_t n = 0; n < m_topology.nodes(); ++n) {
            int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            std::string path = m_dir + "/fabric-" + std::to_string(n) + ".sock";
            unlink(path.c_str());
            sockaddr_un a = address(path);
            if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
                std::fprintf(stderr, "fabric: cannot bind %s: %s\n", path.c_str(), std::strerror(errno));
                return false;
            }
            m_ports.push_back(fd);
            m_paths.push_back(path);
        }
        m_control = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        std::string path = m_dir + "/control.sock";
        unlink(path.c_str());
        sockaddr_un a = address(path);
        if (m_control < 0 || bind(m_control, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(m_control, 4) != 0) {
            std::fprintf(stderr, "fabric: cannot listen on %s: %s\n", path.c_str(), std::strerror(errno));
            return false;
        }
        m_paths.push_back(path);
        return true;
    }

    void close_sockets() {
        for (int fd : m_ports)
            close(fd);
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
            std::vector<pollfd> fds;
            for (int fd : m_ports)
                fds.push_back({ fd, POLLIN, 0 });
            fds.push_back({ m_control, POLLIN, 0 });
            for (auto& c : m_clients)
                fds.push_back({ c.fd, POLLIN, 0 });
            int timeout = -1;
            if (!m_queue.empty()) {
                uint64_t now = now_us(), due = m_queue.top().due_us;
                timeout = due <= now ? 0 : static_cast<int>((due - now + 999) / 1000);
            }
            int ready = poll(fds.data(), fds.size(), timeout);
            if (ready < 0 && errno != EINTR)
                break;
            for (uint32_t n = 0; n < m_ports.size(); ++n) {
                if (!(fds[n].revents & POLLIN))
                    continue;
                for (int burst = 0; burst < 256; ++burst) {
                    ssize_t len = recv(m_ports[n], buf.data(), buf.size(), 0);
                    if (len <= 0)
                        break;
                    forward(n, buf.data(), static_cast<size_t>(len));
                }
            }
            // The clients polled this round (an accepted one joins the next round).
            const size_t polled = fds.size() - m_ports.size() - 1;
            for (size_t i = 0; i < polled && i < m_clients.size(); ++i)
                if (fds[m_ports.size() + 1 + i].revents & (POLLIN | POLLHUP))
                    read_client(i);
            if (fds[m_ports.size()].revents & POLLIN)
                accept_client();
            m_clients.erase(std::remove_if(m_clients.begin(), m_clients.end(), [](const Client& c) { return c.fd < 0; }),
                            m_clients.end());
            deliver_due();
        }
    }

private:
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

    void deliver_due() {
        const uint64_t now = now_us();
        while (!m_queue.empty() && m_queue.top().due_us <= now) {
            const Pending& p = m_queue.top();
            sockaddr_un a = address(m_dir + "/node-" + std::to_string(p.to) + ".sock");
            // A node that is not running (or has no socket yet) simply misses the frame.
            if (sendto(m_ports[p.to], p.frame.data(), p.frame.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0)
                ++m_undeliverable;
            else
                ++m_delivered;
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
            fabric::Link* l = m_topology.link(a, b);
            if (!l)
                return error("no such link in the topology");
            if (json::Value s = root.find("state"); s.valid()) {
                if (!s.string_equals("up") && !s.string_equals("down"))
                    return error("state must be up or down");
                l->state.up = s.string_equals("up");
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
            if (!probability("loss", l->state.loss) || !probability("dup", l->state.dup) ||
                !micros("delay_ms", l->state.delay_us) || !micros("jitter_ms", l->state.jitter_us))
                return error("loss and dup are 0..1, delay_ms and jitter_ms 0..60000");
            if (json::Value v = root.find("rate_kbps"); v.valid()) {
                auto kbps = v.as_uint64();
                if (!kbps || *kbps > 10'000'000)
                    return error("rate_kbps is 0 (unlimited) .. 10000000");
                l->state.rate_kbps = static_cast<uint32_t>(*kbps);
            }
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
            else if (s.string_equals("down"))
                m_topology.set_node_state(n, fabric::NodeState::Down);
            else
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
          << ",\"undeliverable\":" << m_undeliverable << ",\"overflow\":" << m_overflow << ",\"queued\":" << m_queue.size()
          << ",\"partitioned\":" << (m_topology.partitioned() ? "true" : "false") << ",\"links\":[";
        bool first = true;
        for (const auto& l : m_topology.links()) {
            auto it = m_board.counters().find({ l.a, l.b });
            fabric::Switchboard::LinkCounters c = it == m_board.counters().end() ? fabric::Switchboard::LinkCounters {} : it->second;
            o << (first ? "" : ",") << "{\"a\":" << l.a << ",\"b\":" << l.b << ",\"up\":" << (l.state.up ? "true" : "false")
              << ",\"frames\":" << c.frames << ",\"lost\":" << c.lost << ",\"duplicated\":" << c.duplicated
              << ",\"queue_drops\":" << c.queue_drops << ",\"loss\":" << l.state.loss << ",\"dup\":" << l.state.dup
              << ",\"delay_ms\":" << l.state.delay_us / 1000 << ",\"jitter_ms\":" << l.state.jitter_us / 1000
              << ",\"rate_kbps\":" << l.state.rate_kbps << "}";
            first = false;
        }
        o << "],\"node_states\":[";
        for (uint32_t n = 0; n < m_topology.nodes(); ++n) {
            fabric::NodeState s = m_topology.node_state(n);
            o << (n ? "," : "") << (s == fabric::NodeState::Up ? "\"up\"" : s == fabric::NodeState::Paused ? "\"paused\"" : "\"down\"");
        }
        o << "]}";
        return o.str();
    }

    std::string m_dir;
    fabric::Topology m_topology;
    fabric::Switchboard m_board;
    std::vector<int> m_ports;
    std::vector<std::string> m_paths;
    int m_control = -1;
    std::vector<Client> m_clients;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> m_queue;
    uint64_t m_order = 0, m_delivered = 0, m_undeliverable = 0, m_overflow = 0;
    bool m_quit = false;
    std::FILE* m_events = nullptr;
};

int usage() {
    std::fprintf(stderr, "usage: basalt-fabric --dir DIR --nodes N --topology mesh|ring|star|tree|line|FILE.json [--seed S] [--events FILE]\n");
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    std::string dir, topology;
    uint32_t nodes = 0;
    uint64_t seed = 1;
    std::string events;
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
        else
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
    Fabric fabric(dir, std::move(*t), seed, events_file);
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
