// A deterministic simulation of a Raft group on the host: canonical's engine (lib/raft) behind a
// simulated raft_io (network and disk) and a simulated state machine, driven by one seeded
// random source and one event queue, so a seed replays exactly. Faults: message loss,
// duplication, reordering and delay, partitions, crashes that lose whatever the disk had not
// completed (and sometimes tear the write in progress), restarts, and single-server membership
// changes. Raft's safety properties are checked after every event; liveness once the faults end.
#pragma once

#include <cstdint>
#include <string>

namespace raftsim {

struct Options {
    uint64_t seed = 1;
    unsigned nodes = 3;        // voters bootstrapped into the group (3 or 5)
    unsigned fault_ms = 20000; // simulated time with faults on
    unsigned heal_ms = 30000;  // after the faults: time allowed to converge
    bool membership = true;    // an extra server joins and a voter leaves (when the seed draws it)
    // Hand the engine messages as the wire delivers them, reordered and duplicated, instead of
    // through a transport that keeps each sender's order (dropping late copies). Canonical's engine
    // asserts on some reorderings (docs/replication.md), so this is off by default.
    bool raw_network = false;
    // Keep fewer log entries after a snapshot than the snapshot threshold (1..16).
    bool small_trailing = false;
    // Turn off the simulated raft_io's workarounds for upstream defects (docs/replication.md).
    bool as_is = false;
    bool verbose = false; // print each event of the run (for a replay)
};

struct Result {
    bool ok = true;
    std::string failure;         // the violated property and where, when !ok
    uint64_t events = 0;         // events processed
    uint64_t acknowledged = 0;   // client commands acknowledged
    uint64_t applied = 0;        // commands in the agreed state machine sequence
    unsigned leaders = 0;        // distinct (term, leader) pairs seen
    unsigned crashes = 0;        // crashes injected
    unsigned snapshots_sent = 0; // InstallSnapshot messages delivered
    unsigned changes = 0;        // membership changes that completed
    unsigned corrected = 0;      // InstallSnapshot terms the raft_io corrected (an upstream bug)
    unsigned rebased = 0;        // AppendEntries the raft_io rebased on a snapshot (an upstream bug)
    unsigned cut = 0;            // AppendEntries the raft_io cut before a configuration change (an upstream bug)
    unsigned reconfigured = 0;   // snapshots taken whose configuration the raft_io corrected (an upstream bug)
    unsigned leaked = 0;         // allocations the engine still held after every node closed
    uint64_t wire_checked = 0;   // messages sent also through lib/raft/wire and found unchanged
};

Result run(const Options& options);

// The command line that replays a run (printed with every failure).
std::string replay_command(const Options& options);

} // namespace raftsim
