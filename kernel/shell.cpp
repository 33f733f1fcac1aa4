#include "shell.h"

#include "arch/aarch64/cpu.h"
#include "bootargs.h"
#include "clock.h"
#include "console.h"
#include "fault_injection.h"
#include "irq.h"
#include "log.h"
#include "panic.h"
#include "platform.h"
#include "power.h"
#include <abi/version.h>
#include "audit/syscall_log.h"
#include "net/endpoint.h"
#include "net/net_status.h"
#include "cap/kcap.h"
#include "sched/scheduler.h"
#include "syscall/dispatch.h"
#include "syscall/handlers.h"
#include <abi/sys.h>
#include "mcpd/console_desk.h"
#include "mcpd/sink_gate.h"

#include <drivers/generic_timer.h>
#include <drivers/pl011.h>
#include <drivers/genet/genet.h>
#include <drivers/virtio/virtio_net.h>
#include <ktl/log_ring.h>
#include <netcfg/ipv4_config.h>

#include <cstdlib>
#include <string_view>

namespace shell {
namespace {

constexpr size_t kMaxLine = 256;
const Caps* g_caps = nullptr;

struct Command {
    const char* name;
    const char* help;
    void (*fn)(std::string_view arg);
};

void cmd_help(std::string_view);

void cmd_echo(std::string_view arg) { console::printf("%.*s\n", static_cast<int>(arg.size()), arg.data()); }

void cmd_uptime(std::string_view) {
    uint64_t ns = clock::monotonic_ns();
    console::printf("uptime %llu.%06llu s, %llu timer interrupts\n",
                    static_cast<unsigned long long>(ns / 1000000000ull),
                    static_cast<unsigned long long>((ns % 1000000000ull) / 1000),
                    static_cast<unsigned long long>(GenericTimer::tick_count()));
}

void cmd_date(std::string_view) {
    char now[32];
    clock::rfc3339_now(now, sizeof now);
    console::printf("%s\n", now);
}

void cmd_irqs(std::string_view) {
    const auto& info = platform::info();
    console::printf("timer intid %u: %llu\n", info.timer_intid,
                    static_cast<unsigned long long>(irq::count(info.timer_intid)));
    if (auto* uart = platform::console_uart()) {
        console::printf("uart intid %u: %llu (rx irqs %llu, rx bytes %llu, rx dropped %llu, tx irqs %llu)\n",
                        info.uart_intid, static_cast<unsigned long long>(irq::count(info.uart_intid)),
                        static_cast<unsigned long long>(uart->rx_irqs()),
                        static_cast<unsigned long long>(uart->rx_bytes()),
                        static_cast<unsigned long long>(uart->rx_dropped()),
                        static_cast<unsigned long long>(uart->tx_irqs()));
    }
    if (info.net_intid)
        console::printf("virtio-net intid %u: %llu\n", info.net_intid,
                        static_cast<unsigned long long>(irq::count(info.net_intid)));
    console::printf("spurious: %llu\n", static_cast<unsigned long long>(irq::spurious_count()));
}

// Driver counters only: the TCP/IP stack's own state belongs to the net task.
void cmd_net(std::string_view) {
    if (platform::net_device()) {
        for (size_t i = 0; i < platform::kMaxNics; ++i) {
            auto* dev = platform::net_device(i);
            if (!dev)
                break;
            const uint8_t* m = dev->mac();
            auto s = dev->stats();
            console::printf(
                "vn%zu device: virtio-net v%u @ 0x%lx mac %02x:%02x:%02x:%02x:%02x:%02x: rx %llu frames (%llu dropped), "
                "tx %llu frames (%llu ring full), irqs %llu, device errors %llu%s\n",
                i, dev->transport_version(), static_cast<unsigned long>(dev->base()), m[0], m[1], m[2], m[3], m[4],
                m[5], static_cast<unsigned long long>(s.rx_frames), static_cast<unsigned long long>(s.rx_dropped),
                static_cast<unsigned long long>(s.tx_frames), static_cast<unsigned long long>(s.tx_busy),
                static_cast<unsigned long long>(s.irqs), static_cast<unsigned long long>(s.rejected),
                s.broken ? ", queue broken" : "");
        }
    } else if (auto* genet = platform::genet_device()) {
        const uint8_t* m = genet->mac();
        auto c = genet->counters();
        auto s = genet->stats();
        console::printf("genet v5 mac %02x:%02x:%02x:%02x:%02x:%02x phy 0x%08x: link %s %u Mb/s %s; rx %llu frames "
                        "(%llu dropped), tx %llu frames, irqs %llu, device errors %llu%s\n",
                        m[0], m[1], m[2], m[3], m[4], m[5], s.phy_id, genet->link_up() ? "up" : "down", s.speed_mbps,
                        s.full_duplex ? "full duplex" : "half duplex", static_cast<unsigned long long>(c.rx_frames),
                        static_cast<unsigned long long>(c.rx_dropped), static_cast<unsigned long long>(c.tx_frames),
                        static_cast<unsigned long long>(c.irqs), static_cast<unsigned long long>(s.rejected),
                        s.broken ? ", receive ring broken" : "");
    } else {
        console::printf("no network device\n");
        return;
    }
    net::Status st;
    if (!net::read_status(st)) {
        console::printf("vn0: status busy, try again\n");
    } else if (!st.up) {
        console::printf("vn0: no address\n");
    } else {
        char a[16], m[16], g[16];
        netcfg::format_ipv4(st.address, a, sizeof a);
        netcfg::format_ipv4(st.netmask, m, sizeof m);
        netcfg::format_ipv4(st.gateway, g, sizeof g);
        console::printf("vn0: %s netmask %s gw %s (%s", a, m, g, st.dhcp ? "dhcp" : "static");
        if (st.dhcp)
            console::printf(", lease %u s", st.lease_s);
        console::printf(")\n");
    }
    auto k = net::stack_counters();
    console::printf(
        "lwip: link drop %u memerr %u, tcp drop %u memerr %u, pcbs %u (max %u, %u failed), seg err %u, pool err %u\n",
        k.link_drop, k.link_memerr, k.tcp_drop, k.tcp_memerr, k.pcb_used, k.pcb_max, k.pcb_err, k.seg_err, k.pool_err);
    const auto& http = net::http_endpoint();
    if (http.port()) {
        auto e = http.stats();
        console::printf(
            "http :%u: %llu open, %llu half-open, %llu accepted, %llu refused, %llu bytes in, %llu bytes out\n",
            http.port(), static_cast<unsigned long long>(e.open), static_cast<unsigned long long>(e.half_open),
            static_cast<unsigned long long>(e.accepted), static_cast<unsigned long long>(e.refused),
            static_cast<unsigned long long>(e.bytes_in), static_cast<unsigned long long>(e.bytes_out));
    }
}

void cmd_log(std::string_view arg) {
    uint64_t want = 20;
    if (!arg.empty())
        want = strtoull(arg.data(), nullptr, 10);
    uint64_t next = klog::next_seq();
    uint64_t first = next > want ? next - want : 0;
    if (first < klog::oldest_seq())
        first = klog::oldest_seq();
    ktl::LogRecord rec;
    char line[ktl::LogRecord::kMaxText + 48];
    for (uint64_t seq = first; seq < next; ++seq) {
        if (!klog::read(seq, rec))
            continue;
        ktl::format_log_line(rec, line, sizeof line);
        console::printf("%s\n", line);
    }
}

// One-shot deadline mode: stop the periodic tick, arm a single interrupt `ms` from now, wait
// for it in WFI, report when it fired relative to the deadline, then resume the tick.
volatile uint64_t g_oneshot_fired_ns = 0;
void oneshot_fired(uint64_t now_ns) { g_oneshot_fired_ns = now_ns; }

void cmd_oneshot(std::string_view arg) {
    uint64_t ms = arg.empty() ? 50 : strtoull(arg.data(), nullptr, 10);
    if (ms == 0 || ms > 10000) {
        console::printf("oneshot: MS must be 1..10000\n");
        return;
    }
    g_oneshot_fired_ns = 0;
    uint64_t deadline = clock::monotonic_ns() + ms * 1000000ull;
    // The periodic tick is replaced and the count taken with interrupts masked: a tick that
    // fires just before must not be counted as if it came during the wait (a slow host makes
    // that window wide).
    arch::irq_disable();
    GenericTimer::set_deadline(deadline, oneshot_fired);
    uint64_t ticks_before = GenericTimer::tick_count();
    arch::irq_enable();
    while (g_oneshot_fired_ns == 0 && clock::monotonic_ns() < deadline + 2000000000ull)
        arch::wfi();
    uint64_t fired = g_oneshot_fired_ns;
    uint64_t interrupts = GenericTimer::tick_count() - ticks_before;
    GenericTimer::start_periodic(1000000000ull / bootargs::get().tick_hz, sched::on_tick);
    if (fired == 0) {
        console::printf("oneshot: no interrupt\n");
        return;
    }
    console::printf("oneshot: %llu ms deadline fired %lld us late, %llu timer interrupt(s)\n",
                    static_cast<unsigned long long>(ms), static_cast<long long>(fired - deadline) / 1000,
                    static_cast<unsigned long long>(interrupts));
}

void cmd_ps(std::string_view) {
    sysinfo::TaskInfo infos[sched::kMaxTasks];
    int64_t n = sys::task_list(g_caps->introspection, infos, sched::kMaxTasks);
    if (n < 0) {
        console::printf("ps: %s\n", ktl::error_name(static_cast<ktl::Error>(-n)));
        return;
    }
    console::printf("  id  name                     state     prio  cpu ms   switches  heap B   stack B\n");
    for (int64_t i = 0; i < n; ++i) {
        const auto& t = infos[i];
        console::printf("  %-3u %-24s %-9s %-5u %-8llu %-9llu %-8llu %llu\n", t.id, t.name,
                        sched::state_name(static_cast<sched::TaskState>(t.state)), t.priority,
                        (unsigned long long)(t.cpu_ns / 1000000), (unsigned long long)t.switches,
                        (unsigned long long)t.heap_bytes, (unsigned long long)t.stack_bytes);
    }
}

void cmd_mem(std::string_view) {
    sysinfo::MemInfo m {};
    int64_t r = sys::mem_stats(g_caps->introspection, &m);
    if (r < 0) {
        console::printf("mem: %s\n", ktl::error_name(static_cast<ktl::Error>(-r)));
        return;
    }
    console::printf("pages: %llu total, %llu free, %llu used; largest free block %llu KiB\n",
                    (unsigned long long)m.total_pages, (unsigned long long)m.free_pages,
                    (unsigned long long)m.used_pages, (unsigned long long)(m.largest_free_block >> 10));
    console::printf("heap: %llu live allocations, %llu bytes requested, %llu slab pages, %llu large pages\n",
                    (unsigned long long)m.heap_live_allocations, (unsigned long long)m.heap_bytes_requested,
                    (unsigned long long)m.heap_slab_pages, (unsigned long long)m.heap_large_pages);
    console::printf("task stacks: %llu of %llu slots in use\n", (unsigned long long)m.stacks_used,
                    (unsigned long long)m.stacks_total);
}

void cmd_caps(std::string_view) {
    kcap::CapInfo caps[64];
    int64_t n = sys::cap_list(g_caps->introspection, caps, 64);
    if (n < 0) {
        console::printf("caps: %s\n", ktl::error_name(static_cast<ktl::Error>(-n)));
        return;
    }
    console::printf("  slot  type            rights  object              badge\n");
    for (int64_t i = 0; i < n; ++i) {
        char rights[6] = "-----";
        for (int b = 0; b < 5; ++b)
            if (caps[i].rights & (1u << b))
                rights[b] = "rwxgv"[b];
        console::printf("  %-5u %-15s %-7s 0x%016llx %llu\n", caps[i].slot,
                        kcap::type_name(static_cast<kcap::ObjectType>(caps[i].type)), rights,
                        (unsigned long long)caps[i].object_id, (unsigned long long)caps[i].badge);
    }
}

void cmd_audit(std::string_view arg) {
    uint64_t want = arg.empty() ? 20 : strtoull(arg.data(), nullptr, 10);
    uint64_t next = audit::next_seq();
    uint64_t seq = next > want ? next - want : 0;
    for (; seq < next; ++seq) {
        audit::Record r {};
        if (sys::audit_read(g_caps->audit, seq, &r) < 0)
            continue;
        console::printf("  #%llu %llu.%06llu task %u '%s' %s slot %u wants %s rights 0x%x: %s (%s)\n",
                        (unsigned long long)r.seq, (unsigned long long)(r.mono_ns / 1000000000ull),
                        (unsigned long long)((r.mono_ns / 1000) % 1000000), r.task_id, r.task_name,
                        syscall::name(r.syscall), r.slot, kcap::type_name(static_cast<kcap::ObjectType>(r.object_type)),
                        r.rights, r.outcome == audit::Outcome::Allow ? "allow" : "deny",
                        ktl::error_name(static_cast<ktl::Error>(r.error)));
    }
}

void cmd_syscalls(std::string_view) { syscall::print_table(); }

// The console is physical presence (QEMU's stdio, a board's UART): the human a held-back call
// asks for. `proposal list` reads the book; approve and reject go through the HTTP bridge as the
// console principal's own tools/call (mcpd/console_desk.h), so the same rules decide them.
void cmd_proposal(std::string_view arg) {
    std::string_view verb = arg.substr(0, arg.find(' '));
    std::string_view rest = verb.size() < arg.size() ? arg.substr(verb.size() + 1) : std::string_view();
    if (verb == "list" && rest.empty()) {
        static mcpd::ProposalLine lines[mcp::ProposalBook::kMaxProposals];
        size_t n = mcpd::pending_proposals(lines, mcp::ProposalBook::kMaxProposals);
        if (n == 0)
            console::printf("no proposal is pending\n");
        for (size_t i = 0; i < n; ++i) {
            const auto& p = lines[i];
            console::printf("  %u  %s '%s'", p.id, p.tool, p.target);
            if (p.ids)
                console::printf(" (%llu ids)", static_cast<unsigned long long>(p.ids));
            console::printf(", %llu vectors when proposed, by %s, %llu s ago, expires in %llu s\n",
                            static_cast<unsigned long long>(p.vectors), p.proposer,
                            static_cast<unsigned long long>(p.age_s), static_cast<unsigned long long>(p.expires_in_s));
        }
        return;
    }
    const bool approve = verb == "approve";
    uint64_t id = 0;
    bool digits = !rest.empty() && rest.size() <= 10;
    for (char c : rest) {
        digits = digits && c >= '0' && c <= '9';
        id = id * 10 + static_cast<uint64_t>(c - '0');
    }
    if ((!approve && verb != "reject") || !digits || id == 0 || id > 0xffffffffull) {
        console::printf("proposal: list | approve ID | reject ID\n");
        return;
    }
    switch (mcpd::console_desk::post(approve ? mcpd::console_desk::Verb::Approve : mcpd::console_desk::Verb::Reject,
                                     static_cast<uint32_t>(id))) {
    case mcpd::console_desk::Posted::NoBridge:
        console::printf("proposal: no MCP bridge takes the console's decisions (MCP over HTTP is off)\n");
        return;
    case mcpd::console_desk::Posted::Busy:
        console::printf("proposal: the previous decision is still being carried out\n");
        return;
    case mcpd::console_desk::Posted::Ok: break;
    }
    // The approved call runs in a tool task within its time limit (at most 10 s); a minute is
    // generous, and after it the answer goes to the log rather than to nobody.
    static char line[240];
    for (int tries = 0; tries < 600; ++tries) {
        if (mcpd::console_desk::outcome(line, sizeof line)) {
            console::printf("%s\n", line);
            return;
        }
        sys::sleep_ns(100'000'000);
    }
    mcpd::console_desk::abandon();
    console::printf("proposal %llu: no answer within 60 s; it will be in the log (`log`)\n",
                    static_cast<unsigned long long>(id));
}

// `fault` runs the fault in a task of its own, so the report and the kill can be watched from
// a shell that keeps working.
int64_t fault_task(void* kind) {
    const char* k = static_cast<const char*>(kind);
    fault_injection::trigger(std::string_view(k));
    return 0;
}

void cmd_version(std::string_view) { console::printf("Basalt %s (%s)\n", kVersion, kSourceCommit); }
void cmd_fault(std::string_view arg) {
    static const char* const kinds[] = { "data", "write", "exec", "undef", "brk" };
    for (const char* k : kinds) {
        if (arg == k) {
            int64_t t = sys::task_create(g_caps->factory, fault_task, const_cast<char*>(k), 10, "faulty");
            if (t < 0) {
                console::printf("fault: cannot start the task: %s\n", ktl::error_name(static_cast<ktl::Error>(-t)));
                return;
            }
            int64_t code = sys::task_join(static_cast<uint64_t>(t), 0);
            console::printf("fault: task 'faulty' ended with %lld; the shell goes on\n", (long long)code);
            return;
        }
    }
    console::printf("fault: KIND is one of data|write|exec|undef|brk\n");
}
void cmd_panic(std::string_view arg) {
    panic("requested from the shell%s%.*s", arg.empty() ? "" : ": ", static_cast<int>(arg.size()), arg.data());
}
void cmd_poweroff(std::string_view) {
    console::printf("powering off\n");
    power::poweroff(power::kExitOk);
}
void cmd_reboot(std::string_view) {
    console::printf("rebooting\n");
    power::reboot();
}

const Command kCommands[] = {
    { "help", "list commands", cmd_help },
    { "echo", "echo TEXT: print TEXT", cmd_echo },
    { "uptime", "monotonic time and timer interrupt count", cmd_uptime },
    { "date", "UTC wall-clock time (RFC 3339)", cmd_date },
    { "irqs", "interrupt counters", cmd_irqs },
    { "net", "network device counters", cmd_net },
    { "log", "log [N]: last N kernel log records (default 20)", cmd_log },
    { "oneshot", "oneshot [MS]: one-shot timer deadline test (default 50 ms)", cmd_oneshot },
    { "version", "kernel version and source commit", cmd_version },
    { "ps", "tasks: state, priority, CPU time, switches, memory", cmd_ps },
    { "mem", "physical pages, kernel heap and task stacks", cmd_mem },
    { "caps", "this shell's capability table", cmd_caps },
    { "audit", "audit [N]: last N audit records (default 20)", cmd_audit },
    { "proposal", "proposal list | approve ID | reject ID: calls held back for a human's yes", cmd_proposal },
    { "syscalls", "the system call table", cmd_syscalls },
    { "fault", "fault KIND: run a task that faults (data|write|exec|undef|brk); it is killed", cmd_fault },
    { "panic", "panic [REASON]: kernel panic with backtrace", cmd_panic },
    { "poweroff", "power off (exit status 0)", cmd_poweroff },
    { "reboot", "reset the machine", cmd_reboot },
};

void cmd_help(std::string_view) {
    for (const auto& c : kCommands)
        console::printf("  %-9s %s\n", c.name, c.help);
}

void execute(std::string_view line) {
    while (!line.empty() && line.front() == ' ')
        line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.empty())
        return;
    size_t space = line.find(' ');
    std::string_view name = line.substr(0, space);
    std::string_view arg = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    for (const auto& c : kCommands) {
        if (name == c.name) {
            c.fn(arg);
            return;
        }
    }
    console::printf("unknown command '%.*s' (try 'help')\n", static_cast<int>(name.size()), name.data());
}

} // namespace

int64_t task_main(void* arg) {
    g_caps = static_cast<const Caps*>(arg);
    char line[kMaxLine + 1] = {};
    size_t len = 0;
    bool overflow = false;
    static constexpr const char* kPrompt = "basalt> ";
    console::show_prompt(kPrompt, line);
    for (;;) {
        uint8_t buf[64];
        int64_t got = sys::serial_read(g_caps->serial, buf, sizeof buf, 0, 0);
        if (got <= 0)
            continue;
        size_t n = static_cast<size_t>(got);
        for (size_t i = 0; i < n; ++i) {
            char c = static_cast<char>(buf[i]);
            if (c == '\r' || c == '\n') {
                console::prompt_hidden(); // the command's output and logs follow plainly
                console::puts("\n");
                if (overflow)
                    console::printf("line too long (max %zu characters), ignored\n", kMaxLine);
                else
                    execute(std::string_view(line, len));
                len = 0;
                overflow = false;
                console::show_prompt(kPrompt, line);
            } else if (c == 0x7f || c == 0x08) {
                if (len > 0) {
                    --len;
                    console::prompt_input(len);
                    console::puts("\b \b");
                }
            } else if (c >= 0x20 && c < 0x7f) {
                if (len < kMaxLine) {
                    line[len++] = c;
                    console::prompt_input(len);
                    console::write(&c, 1);
                } else {
                    overflow = true;
                }
            }
        }
    }
}

} // namespace shell
