// raft_sim: runs the Raft simulation (sim.h) over a range of seeds, or one seed verbosely to
// replay a failure. Exit status 1 when any seed fails; every failure prints its replay command.
// --isolate runs each seed in a child process, so that an engine assertion fails one seed and the
// range goes on (slower: a fork per seed).
//   raft_sim [--seeds FIRST..LAST | --seed S] [--nodes 3|5] [--no-membership] [--raw-network]
//            [--small-trailing] [--as-is] [--isolate] [--verbose] [--fault-ms N] [--heal-ms N]
#include "sim.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

// The seed in progress: an assertion in the engine aborts the process, and the handler names the
// seed and how to replay it before it dies.
static raftsim::Options g_current;
static void on_abort(int) {
    std::string line = "seed " + std::to_string(g_current.seed) +
                       " FAILED: the run aborted (an assertion)\n  replay: " + raftsim::replay_command(g_current) +
                       "\n";
    ssize_t w = write(1, line.data(), line.size());
    (void)w;
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
}

// Runs one seed in a child process (with --isolate), so that an assertion inside the engine (an abort) fails that
// seed only; the child's figures come back through a pipe.
static bool run_isolated(const raftsim::Options& o, raftsim::Result& r, bool isolate) {
    if (o.verbose || !isolate) {
        r = raftsim::run(o);
        return true;
    }
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        signal(SIGABRT, SIG_DFL); // the parent reports the seed
        raftsim::Result c = raftsim::run(o);
        uint64_t fig[13] = { c.ok,
                             c.events,
                             c.acknowledged,
                             c.applied,
                             c.leaders,
                             c.crashes,
                             c.snapshots_sent,
                             c.changes,
                             c.leaked,
                             (uint64_t)c.rebased << 32 | c.corrected,
                             c.wire_checked,
                             c.cut,
                             c.reconfigured };
        ssize_t w = write(fds[1], fig, sizeof fig);
        w += write(fds[1], c.failure.data(), c.failure.size());
        (void)w;
        _exit(0);
    }
    close(fds[1]);
    uint64_t fig[13] = {};
    ssize_t got = read(fds[0], fig, sizeof fig);
    std::string text;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (got != static_cast<ssize_t>(sizeof fig)) {
        r.ok = false;
        r.failure = "the run died (" +
                    std::string(WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                    : "exit " + std::to_string(WEXITSTATUS(status))) +
                    "): an assertion in the engine or the simulation; replay it to see which";
        return false;
    }
    r.ok = fig[0];
    r.events = fig[1];
    r.acknowledged = fig[2];
    r.applied = fig[3];
    r.leaders = static_cast<unsigned>(fig[4]);
    r.crashes = static_cast<unsigned>(fig[5]);
    r.snapshots_sent = static_cast<unsigned>(fig[6]);
    r.changes = static_cast<unsigned>(fig[7]);
    r.leaked = static_cast<unsigned>(fig[8]);
    r.rebased = static_cast<unsigned>(fig[9] >> 32);
    r.corrected = static_cast<unsigned>(fig[9] & 0xffffffffu);
    r.wire_checked = fig[10];
    r.cut = static_cast<unsigned>(fig[11]);
    r.reconfigured = static_cast<unsigned>(fig[12]);
    r.failure = text;
    return true;
}

int main(int argc, char** argv) {
    raftsim::Options o;
    uint64_t first = 1, last = 100;
    bool isolate = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "raft_sim: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--seed")
            first = last = std::stoull(value());
        else if (a == "--seeds") {
            std::string v = value();
            auto dots = v.find("..");
            if (dots == std::string::npos) {
                std::fprintf(stderr, "raft_sim: --seeds FIRST..LAST\n");
                return 2;
            }
            first = std::stoull(v.substr(0, dots));
            last = std::stoull(v.substr(dots + 2));
        } else if (a == "--nodes")
            o.nodes = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--no-membership")
            o.membership = false;
        else if (a == "--raw-network")
            o.raw_network = true;
        else if (a == "--isolate")
            isolate = true;
        else if (a == "--small-trailing")
            o.small_trailing = true;
        else if (a == "--as-is")
            o.as_is = true;
        else if (a == "--verbose" || a == "-v")
            o.verbose = true;
        else if (a == "--fault-ms")
            o.fault_ms = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--heal-ms")
            o.heal_ms = static_cast<unsigned>(std::stoul(value()));
        else {
            std::fprintf(stderr, "raft_sim: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    signal(SIGABRT, on_abort);
    auto start = std::chrono::steady_clock::now();
    unsigned failures = 0;
    uint64_t events = 0, acked = 0, snapshots = 0, crashes = 0, changes = 0, leaked = 0, leaky = 0, corrected = 0,
             rebased = 0, cut = 0, reconfigured = 0, wire = 0;
    for (uint64_t seed = first; seed <= last; ++seed) {
        o.seed = seed;
        raftsim::Result r;
        g_current = o;
        if (!run_isolated(o, r, isolate)) {
            ++failures;
            std::printf("seed %llu FAILED: %s\n  replay: %s\n", static_cast<unsigned long long>(seed),
                        r.failure.c_str(), raftsim::replay_command(o).c_str());
            continue;
        }
        events += r.events;
        acked += r.acknowledged;
        snapshots += r.snapshots_sent;
        crashes += r.crashes;
        changes += r.changes;
        leaked += r.leaked;
        leaky += r.leaked ? 1 : 0;
        corrected += r.corrected;
        rebased += r.rebased;
        cut += r.cut;
        reconfigured += r.reconfigured;
        wire += r.wire_checked;
        if (!r.ok) {
            ++failures;
            std::printf("seed %llu FAILED: %s\n  replay: %s\n", static_cast<unsigned long long>(seed),
                        r.failure.c_str(), raftsim::replay_command(o).c_str());
        } else if (o.verbose) {
            std::printf(
                "seed %llu ok: %llu events, %llu acknowledged, %llu applied, %u leaders, %u crashes, %u snapshots, "
                "%u membership changes\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(r.events),
                static_cast<unsigned long long>(r.acknowledged), static_cast<unsigned long long>(r.applied), r.leaders,
                r.crashes, r.snapshots_sent, r.changes);
        }
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    uint64_t n = last - first + 1;
    std::printf(
        "raft_sim: %llu seeds (%llu..%llu), %u nodes: %u failed; %.1f s, %.1f seeds/s; %llu events, %llu commands "
        "acknowledged, %llu crashes, %llu snapshots installed, %llu membership changes; engine allocations left at close: %llu "
        "in %llu seeds; raft_io workarounds: %llu InstallSnapshot terms corrected, %llu AppendEntries rebased, %llu "
        "cut before a configuration change, %llu snapshots' configuration corrected; %llu "
        "messages also through lib/raft/wire, unchanged\n",
        static_cast<unsigned long long>(n), static_cast<unsigned long long>(first),
        static_cast<unsigned long long>(last), o.nodes, failures, s, n / s, static_cast<unsigned long long>(events),
        static_cast<unsigned long long>(acked), static_cast<unsigned long long>(crashes),
        static_cast<unsigned long long>(snapshots), static_cast<unsigned long long>(changes),
        static_cast<unsigned long long>(leaked), static_cast<unsigned long long>(leaky),
        static_cast<unsigned long long>(corrected), static_cast<unsigned long long>(rebased),
        static_cast<unsigned long long>(cut), static_cast<unsigned long long>(reconfigured),
        static_cast<unsigned long long>(wire));
    return failures ? 1 : 0;
}
