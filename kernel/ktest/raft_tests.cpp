// ktest=raft: canonical's Raft engine running freestanding in the kernel (issue 35). Three
// kraft::Members in this task, their datagrams sealed and opened under a key by lib/raft/wire and
// carried by a loopback link (the UDP link comes next), on the kernel's clock, random numbers and
// bounded engine heap: a leader is elected, commands are committed and applied in the same order
// everywhere, the leader cut off is replaced by a new one in a higher term which commits more, the
// old one catches up once the link is back; a member closed and started again on its disk takes up
// its term and log (no bootstrap) and catches up; everything the engine allocated is given back.
// Snapshots every 16 applied entries, 32 kept behind: the log stays bounded, and the old leader,
// cut off while 100 commands went by, is behind the new leader's log and installs its snapshot
// (the restarted member then starts from its own snapshot and the entries after it).
// Each member's state machine is a directory of replicated collections (lib/raft/directory.h,
// group 0's state): placements and a forget among the commands, carried by the snapshots the
// members take, the old leader installs and the restarted member starts from; at the end every
// member's directory is the same, byte for byte, and holds what the commands left.
// Each member's disk is in memory (the records kept as the kernel's RaftLog keeps them), its
// commits durable one round after they are written, so appends wait for them as on a real disk.
// ktest=raftreplace: a voter killed and replaced by a newcomer that was never a member (started
// with no configuration: it bootstraps nothing), through the leader's VoterReplacement (added,
// standby, promoted once caught up — from the leader's snapshot, the log being compacted — then
// the dead voter removed): the group commits with the newcomer, and the dead voter, started again
// on its disk, disturbs no one (the leader keeps its term).
#include "../clock.h"
#include "../cluster/voter_replacement.h"
#include "../mm/kheap.h"
#include "../raft/raft_heap.h"
#include "../raft/raft_member.h"
#include "../raft/raft_store.h"
#include "cases.h"

#include <raft/directory.h>
#include <raft/log_image.h>

#include <cstring>
#include <new>

namespace ktest {
namespace {

constexpr size_t kNodes = 4; // the group's three voters, and a newcomer (raft_replace only)
constexpr size_t kVoters = 3;
constexpr uint64_t kGroup = 7;
constexpr unsigned kThreshold = 16, kTrailing = 32;

class Loopback final : public kraft::Link {
public:
    static constexpr size_t kSlots = 512;
    struct Datagram {
        uint64_t to;
        uint16_t len;
        uint8_t bytes[raftwire::kMaxDatagram];
    };

    bool init() {
        auto mem = kheap::alloc(sizeof(Datagram) * kSlots);
        m_slots = mem ? static_cast<Datagram*>(*mem) : nullptr;
        return m_slots != nullptr;
    }
    void release() {
        if (m_slots)
            kheap::free(m_slots);
        m_slots = nullptr;
    }
    void set_sender(uint64_t id) { m_sender = id; }
    void isolate(uint64_t id) { m_isolated = id; } // 0: everyone linked
    void send(uint64_t to, std::span<const uint8_t> d) override {
        if (m_count == kSlots || d.size() > raftwire::kMaxDatagram) {
            ++m_lost;
            return;
        }
        if (m_isolated && (to == m_isolated || m_sender == m_isolated))
            return; // the link is down
        Datagram& slot = m_slots[(m_head + m_count++) % kSlots];
        slot.to = to;
        slot.len = static_cast<uint16_t>(d.size());
        std::memcpy(slot.bytes, d.data(), d.size());
    }
    // Hands every datagram queued now to its member (those sent meanwhile wait for the next call).
    void deliver(kraft::Member (&members)[kNodes]) {
        for (size_t n = m_count; n > 0; --n) {
            Datagram& d = m_slots[m_head];
            m_head = (m_head + 1) % kSlots;
            --m_count;
            if (d.to >= 1 && d.to <= kNodes) {
                m_sender = d.to; // what the receiver sends in answer comes from it
                members[d.to - 1].receive({ d.bytes, d.len });
            }
        }
    }
    uint64_t lost() const { return m_lost; }

private:
    Datagram* m_slots = nullptr;
    size_t m_head = 0, m_count = 0;
    uint64_t m_sender = 0, m_isolated = 0, m_lost = 0;
};

// A member's disk: each record a commit of its own, durable once commit() runs (a round later).
class MemoryDisk final : public kraft::Disk {
public:
    int64_t write(raftlog::Kind kind, std::span<const std::byte> payload) override {
        if (m_images.apply(kind, payload) != ktl::Error::None)
            return -static_cast<int64_t>(ktl::Error::Corrupt);
        return static_cast<int64_t>(++m_written);
    }
    int64_t durable(uint64_t ticket) override { return ticket <= m_durable ? 1 : 0; }
    bool wait(uint64_t ticket) override {
        if (ticket > m_durable)
            m_durable = ticket; // (the wait is the write itself here)
        return true;
    }
    int64_t load(uint64_t group, std::span<std::byte> out, uint64_t offset) override {
        return static_cast<int64_t>(out.empty() ? m_images.stream_bytes(group)
                                                : m_images.stream_copy(group, out, offset));
    }
    void commit() { m_durable = m_written; }
    void release() { m_images.clear(); }

private:
    raftlog::Images m_images { raftstore::kernel_memory() };
    uint64_t m_written = 0, m_durable = 0;
};
MemoryDisk* g_disks = nullptr; // kNodes

// A member's state machine: 8-byte commands are counted, 'P' + a placement and 'F' + a forget
// change the directory; its snapshot is the directory's.
class DirectoryMachine final : public kraft::StateMachine {
public:
    void apply(std::span<const uint8_t> command) override {
        const auto* bytes = reinterpret_cast<const std::byte*>(command.data());
        const std::span<const std::byte> record(bytes + 1, command.empty() ? 0 : command.size() - 1);
        uint32_t voters[raftdir::kMaxVoters];
        if (command.size() == sizeof(uint64_t))
            return;
        if (command.empty()) {
            ++refused;
        } else if (command[0] == 'P') {
            auto p = raftdir::decode_place(record, voters);
            refused += p && directory.place(*p).ok() ? 0 : 1;
        } else if (command[0] == 'F') {
            auto f = raftdir::decode_forget(record);
            refused += f && directory.forget(*f).ok() ? 0 : 1;
        } else {
            ++refused;
        }
    }
    void proposal_failed(uint64_t) override {}
    void installed(uint64_t) override { ++installs; }
    size_t save(std::span<uint8_t> out) override {
        return directory.snapshot({ reinterpret_cast<std::byte*>(out.data()), out.size() });
    }
    bool load(std::span<const uint8_t> state) override {
        if (state.empty()) { // (a snapshot of no directory: the group's first)
            directory = raftdir::Directory {};
            return true;
        }
        ++loads;
        return directory.restore({ reinterpret_cast<const std::byte*>(state.data()), state.size() });
    }

    raftdir::Directory directory;
    uint64_t refused = 0, installs = 0, loads = 0;
};
static_assert(raftdir::kMaxSnapshot <= kraft::StateMachine::kMaxMachineState);

// Has the leader propose a placement of `name` on `voters` (or, forget: its forget of `group`).
bool propose_directory(kraft::Member& leader, std::string_view name, std::span<const uint32_t> voters,
                       uint32_t group = 0) {
    uint8_t command[1 + raftdir::kPlaceHeader + 4 * raftdir::kMaxVoters + raftdir::kMaxNameLength];
    auto* record = reinterpret_cast<std::byte*>(command + 1);
    const std::span<std::byte> room(record, sizeof command - 1);
    size_t bytes;
    if (group) {
        command[0] = 'F';
        const raftdir::Forget f { group, name };
        KT_CHECK(raftdir::encode(f, room), "forget not encoded");
        bytes = raftdir::forget_bytes(f);
    } else {
        command[0] = 'P';
        const raftdir::Place p { name, voters, 8 };
        KT_CHECK(raftdir::encode(p, room), "placement not encoded");
        bytes = raftdir::place_bytes(p);
    }
    KT_CHECK(leader.propose({ command, 1 + bytes }), "the leader refused a directory command");
    return true;
}

// Every member's directory is the same as member 1's, byte for byte.
bool same_directories(DirectoryMachine (&machines)[kNodes], size_t count) {
    static uint8_t first[raftdir::kMaxSnapshot], other[raftdir::kMaxSnapshot];
    const size_t n = machines[0].save(first);
    for (size_t i = 1; i < count; ++i)
        if (machines[i].save(other) != n || std::memcmp(first, other, n) != 0)
            return false;
    return true;
}

// Runs the group (deliver, turn each member, commit the disks, sleep 1 ms) until done() or `ms` pass.
template <typename Done>
bool run_until(Loopback& link, kraft::Member (&members)[kNodes], uint64_t ms, Done&& done) {
    const uint64_t end = clock::monotonic_ns() + ms * kMs;
    while (clock::monotonic_ns() < end) {
        link.deliver(members);
        for (size_t i = 0; i < kNodes; ++i) {
            link.set_sender(i + 1);
            members[i].turn();
        }
        for (size_t i = 0; i < kNodes; ++i)
            g_disks[i].commit();
        if (done())
            return true;
        sys::sleep_ns(kMs);
    }
    return false;
}

uint64_t leader_of(kraft::Member (&members)[kNodes], uint64_t except) {
    for (size_t i = 0; i < kNodes; ++i)
        if (i + 1 != except && members[i].status().is_leader)
            return i + 1;
    return 0;
}

bool propose(Loopback& link, kraft::Member (&members)[kNodes], uint64_t leader, uint64_t first, uint64_t count) {
    for (uint64_t c = first; c < first + count; ++c) {
        // A full proposal table waits for the group to apply what it holds.
        bool taken = false;
        for (int tries = 0; tries < 2000 && !taken; ++tries) {
            link.set_sender(leader); // what the leader sends as it takes the command comes from it
            taken = members[leader - 1].propose({ reinterpret_cast<const uint8_t*>(&c), sizeof c });
            if (!taken)
                run_until(link, members, 1, [] { return false; }); // a round and a millisecond
        }
        if (!taken)
            for (size_t i = 0; i < kNodes; ++i) {
                const kraft::MemberStatus s = members[i].status();
                console::printf("ktest:   member %zu: role %u term %llu leader %llu commit %llu last %llu entries %llu "
                                "snapshot %llu applied %llu\n",
                                i + 1, s.role, static_cast<unsigned long long>(s.term),
                                static_cast<unsigned long long>(s.leader), static_cast<unsigned long long>(s.commit),
                                static_cast<unsigned long long>(s.last_index),
                                static_cast<unsigned long long>(s.entries),
                                static_cast<unsigned long long>(s.snapshot_index),
                                static_cast<unsigned long long>(s.applied));
            }
        KT_CHECK(taken, "command %llu not taken by leader %llu", static_cast<unsigned long long>(c),
                 static_cast<unsigned long long>(leader));
    }
    return true;
}

// Every running member (but `except`) applied `applied` commands, alike.
bool agreed(kraft::Member (&members)[kNodes], uint64_t applied, uint64_t except = 0) {
    uint64_t hash = 0;
    bool first = true;
    for (size_t i = 0; i < kNodes; ++i) {
        if (i + 1 == except || !members[i].running())
            continue;
        const kraft::MemberStatus s = members[i].status();
        if (s.applied != applied || (!first && s.applied_hash != hash))
            return false;
        hash = s.applied_hash;
        first = false;
    }
    return true;
}

// Closes a group's members and gives back its disks, link and memory: true when the engine's heap
// is back where it was (`before`) and refused nothing.
template <typename Group>
bool released(Group& g, void* mem, const kraft::HeapStats& before) {
    for (auto& m : g.members)
        m.close();
    for (auto& d : g.disks)
        d.release();
    g.link.release();
    g.~Group();
    kheap::free(mem);
    const kraft::HeapStats after = kraft::heap_stats();
    KT_CHECK(after.used == before.used && after.blocks == before.blocks,
             "the engine holds %llu bytes in %llu blocks after closing", static_cast<unsigned long long>(after.used),
             static_cast<unsigned long long>(after.blocks));
    KT_CHECK(after.refused == 0, "the engine's heap refused %llu allocations",
             static_cast<unsigned long long>(after.refused));
    return true;
}

} // namespace

bool raft_group(const Caps&) {
    kraft::heap_install(4u << 20);
    const kraft::HeapStats before = kraft::heap_stats();
    static const uint8_t kKey[32] = { 'b', 'a', 's', 'a', 'l', 't', '-', 'r', 'a', 'f', 't', '-', 'k', 't', 'e', 's',
                                      't', '-', 'k', 'e', 'y', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9' };
    // On the heap: the task's stack is small. (A failed check leaves them: the run is over anyway.)
    struct Group {
        Loopback link;
        MemoryDisk disks[kNodes];
        kraft::Member members[kNodes];
        DirectoryMachine machines[kNodes];
    };
    auto mem = kheap::alloc(sizeof(Group));
    KT_CHECK(mem, "no memory for the group");
    Group& g = *new (*mem) Group;
    Loopback& link = g.link;
    kraft::Member(&members)[kNodes] = g.members;
    g_disks = g.disks;
    KT_CHECK(link.init(), "no memory for the loopback link");
    const uint64_t voters[kVoters] = { 1, 2, 3 };
    for (size_t i = 0; i < kVoters; ++i) {
        members[i].set_state_machine(&g.machines[i]);
        KT_CHECK(members[i].set_snapshot_policy(kThreshold, kTrailing), "snapshot policy refused");
        KT_CHECK(members[i].start(kGroup, i + 1, voters, link, g.disks[i], kKey, 1), "member %zu did not start", i + 1);
        KT_CHECK(members[i].recovered_term() == 0, "member %zu found state on an empty disk", i + 1);
    }

    uint64_t t0 = clock::monotonic_ns();
    KT_CHECK(run_until(link, members, 15000, [&] { return leader_of(members, 0) != 0; }), "no leader in 15 s");
    const uint64_t elected_ms = (clock::monotonic_ns() - t0) / kMs;
    const uint64_t first = leader_of(members, 0);
    const uint64_t first_term = members[first - 1].status().term;

    t0 = clock::monotonic_ns();
    const uint32_t three[] = { 0x0a000001, 0x0a000002, 0x0a000003 };
    const uint32_t five[] = { 0x0a000003, 0x0a000004, 0x0a000005, 0x0a000006, 0x0a000007 };
    if (!propose_directory(members[first - 1], "alpha", three) || !propose(link, members, first, 0, 25) ||
        !propose_directory(members[first - 1], "beta", five) || !propose(link, members, first, 25, 23))
        return false;
    KT_CHECK(run_until(link, members, 15000, [&] { return agreed(members, 50); }),
             "50 commands not applied everywhere in the same order");
    KT_CHECK(same_directories(g.machines, kVoters) && g.machines[0].directory.entries().size() == 2,
             "the directories differ after two placements");
    const uint64_t commit_ms = (clock::monotonic_ns() - t0) / kMs;

    // The leader cut off: the other two elect one of themselves in a higher term and go on.
    link.isolate(first);
    t0 = clock::monotonic_ns();
    KT_CHECK(run_until(link, members, 20000, [&] { return leader_of(members, first) != 0; }),
             "no new leader 20 s after leader %llu was cut off", static_cast<unsigned long long>(first));
    const uint64_t failover_ms = (clock::monotonic_ns() - t0) / kMs;
    const uint64_t second = leader_of(members, first);
    KT_CHECK(members[second - 1].status().term > first_term, "the new leader's term is not higher");
    // What the cut-off leader is still asked to do is never committed: it is dropped (the hashes
    // below would differ otherwise).
    (void)members[first - 1].propose({ reinterpret_cast<const uint8_t*>(&t0), sizeof t0 });
    // The old leader misses these: it learns them from the new leader's snapshot.
    if (!propose_directory(members[second - 1], "alpha", {}, 1) ||
        !propose_directory(members[second - 1], "gamma", three) || !propose(link, members, second, 100, 98))
        return false;
    KT_CHECK(run_until(link, members, 15000, [&] { return agreed(members, 150, first); }),
             "the two linked members did not apply 150 commands alike");
    KT_CHECK(members[first - 1].status().applied == 50, "the cut-off leader applied something alone");
    const uint64_t behind = members[first - 1].status().last_index;
    KT_CHECK(members[second - 1].status().snapshot_index > behind,
             "the new leader's snapshot (%llu) is not past the old leader's log (%llu)",
             static_cast<unsigned long long>(members[second - 1].status().snapshot_index),
             static_cast<unsigned long long>(behind));

    // The link back: the old leader learns the new term, drops what it could not commit, and
    // installs the new leader's snapshot (the entries it misses are no longer in its log).
    link.isolate(0);
    KT_CHECK(run_until(link, members, 20000, [&] { return agreed(members, 150); }), "member %llu did not catch up",
             static_cast<unsigned long long>(first));
    const uint64_t installed = members[first - 1].status().snapshots_installed;
    KT_CHECK(installed >= 1, "member %llu caught up without a snapshot", static_cast<unsigned long long>(first));
    KT_CHECK(g.machines[first - 1].loads >= 1 && g.machines[first - 1].installs == installed,
             "the installed snapshot's directory was not loaded");
    KT_CHECK(same_directories(g.machines, kVoters), "the old leader's directory differs after the snapshot");
    // A follower closed and started again on its disk, in a later life: it takes up its term and
    // log, applies the committed commands again, and goes on with the group.
    const uint64_t leader = leader_of(members, 0);
    const uint64_t restarted = leader == 1 ? 2 : 1;
    const kraft::MemberStatus before_restart = members[restarted - 1].status();
    members[restarted - 1].close();
    g.machines[restarted - 1].directory = raftdir::Directory {}; // (what it knew lived in its memory)
    KT_CHECK(members[restarted - 1].start(kGroup, restarted, voters, link, g.disks[restarted - 1], kKey, 2),
             "member %llu did not start again", static_cast<unsigned long long>(restarted));
    KT_CHECK(members[restarted - 1].recovered_term() == before_restart.term &&
                 members[restarted - 1].recovered_entries() == before_restart.entries &&
                 members[restarted - 1].status().snapshot_index == before_restart.snapshot_index,
             "member %llu came back with term %llu and %llu entries, not %llu and %llu",
             static_cast<unsigned long long>(restarted),
             static_cast<unsigned long long>(members[restarted - 1].recovered_term()),
             static_cast<unsigned long long>(members[restarted - 1].recovered_entries()),
             static_cast<unsigned long long>(before_restart.term),
             static_cast<unsigned long long>(before_restart.entries));
    KT_CHECK(before_restart.snapshot_index > 0, "member %llu took no snapshot in 150 commands",
             static_cast<unsigned long long>(restarted));
    if (!propose(link, members, leader, 300, 10))
        return false;
    KT_CHECK(run_until(link, members, 20000, [&] { return agreed(members, 160); }),
             "the restarted member %llu did not apply the 160 commands alike",
             static_cast<unsigned long long>(restarted));
    // Every directory alike, and what the commands left: beta in group 2, gamma in group 3.
    const raftdir::Directory& d = g.machines[restarted - 1].directory;
    KT_CHECK(same_directories(g.machines, kVoters), "the restarted member's directory differs");
    KT_CHECK(d.entries().size() == 2 && !d.find("alpha") && d.find("beta") && d.find("beta")->group == 2 &&
                 d.find("beta")->voter_count == 5 && d.find("gamma") && d.find("gamma")->group == 3 &&
                 d.next_group() == 4,
             "the directory holds %zu entries, next group %u", d.entries().size(), d.next_group());
    for (size_t i = 0; i < kVoters; ++i)
        KT_CHECK(g.machines[i].refused == 0, "member %zu refused a directory command", i + 1);
    kraft::MemberStatus s[kVoters];
    uint64_t taken = 0;
    for (size_t i = 0; i < kVoters; ++i) {
        s[i] = members[i].status();
        taken += s[i].snapshots_taken;
        // The log is bounded by the snapshots: at most trailing + threshold entries, and what is
        // in flight.
        KT_CHECK(s[i].entries <= kTrailing + kThreshold + kraft::kMaxProposals,
                 "member %zu holds %llu entries with snapshots every %u", i + 1,
                 static_cast<unsigned long long>(s[i].entries), kThreshold);
    }
    KT_CHECK(s[0].refused + s[1].refused + s[2].refused == 0, "datagrams refused on a clean link");
    KT_CHECK(link.lost() == 0, "the loopback link overflowed");
    const kraft::HeapStats peak = kraft::heap_stats();
    if (!released(g, *mem, before))
        return false;
    console::printf("ktest:   raft: leader %llu elected in %llu ms, 50 commands applied on 3 members in %llu ms; "
                    "leader cut off, %llu elected in %llu ms (term %llu), 100 more applied, the old leader caught up; "
                    "member %llu restarted on its disk, 10 more applied everywhere; "
                    "%llu snapshots taken, the old leader installed %llu; "
                    "%llu datagrams; engine heap peak %llu bytes, all given back\n",
                    static_cast<unsigned long long>(first), static_cast<unsigned long long>(elected_ms),
                    static_cast<unsigned long long>(commit_ms), static_cast<unsigned long long>(second),
                    static_cast<unsigned long long>(failover_ms), static_cast<unsigned long long>(s[second - 1].term),
                    static_cast<unsigned long long>(restarted), static_cast<unsigned long long>(taken),
                    static_cast<unsigned long long>(installed),
                    static_cast<unsigned long long>(s[0].sent + s[1].sent + s[2].sent),
                    static_cast<unsigned long long>(peak.peak));
    return true;
}

bool raft_replace(const Caps&) {
    kraft::heap_install(4u << 20);
    const kraft::HeapStats before = kraft::heap_stats();
    static const uint8_t kKey[32] = { 'b', 'a', 's', 'a', 'l', 't', '-', 'r', 'a', 'f', 't', '-', 'r', 'e', 'p', 'l',
                                      'a', 'c', 'e', '-', 'k', 'e', 'y', '-', '0', '1', '2', '3', '4', '5', '6', '7' };
    struct Group {
        Loopback link;
        MemoryDisk disks[kNodes];
        kraft::Member members[kNodes];
        clusterd::VoterReplacement replacement;
    };
    auto mem = kheap::alloc(sizeof(Group));
    KT_CHECK(mem, "no memory for the group");
    Group& g = *new (*mem) Group;
    Loopback& link = g.link;
    kraft::Member(&members)[kNodes] = g.members;
    g_disks = g.disks;
    KT_CHECK(link.init(), "no memory for the loopback link");
    const uint64_t voters[kVoters] = { 1, 2, 3 };
    constexpr uint64_t kNewcomer = 4;
    for (size_t i = 0; i < kNodes; ++i) {
        KT_CHECK(members[i].set_snapshot_policy(kThreshold, kTrailing), "snapshot policy refused");
        const std::span<const uint64_t> bootstrap = i + 1 == kNewcomer ? std::span<const uint64_t>() : voters;
        KT_CHECK(members[i].start(kGroup, i + 1, bootstrap, link, g.disks[i], kKey, 1), "member %zu did not start",
                 i + 1);
    }
    KT_CHECK(run_until(link, members, 15000, [&] { return leader_of(members, 0) != 0; }), "no leader in 15 s");
    const uint64_t leader = leader_of(members, 0);
    KT_CHECK(leader != kNewcomer, "the newcomer was elected");
    if (!propose(link, members, leader, 0, 60))
        return false;
    KT_CHECK(run_until(link, members, 15000, [&] { return agreed(members, 60, kNewcomer); }),
             "60 commands not applied on the voters");
    const kraft::MemberStatus joiner = members[kNewcomer - 1].status();
    KT_CHECK(!joiner.member && joiner.applied == 0 && joiner.server_count == 0,
             "the newcomer joined on its own (member %d, applied %llu, %u servers)", joiner.member,
             static_cast<unsigned long long>(joiner.applied), joiner.server_count);
    KT_CHECK(members[leader - 1].status().snapshot_index > 0, "the leader took no snapshot in 60 commands");

    // A follower dies; the leader replaces it by the newcomer.
    const uint64_t dead = leader == 1 ? 2 : 1;
    const kraft::MemberStatus dead_before = members[dead - 1].status();
    members[dead - 1].close();
    uint64_t t0 = clock::monotonic_ns();
    KT_CHECK(g.replacement.start(dead, kNewcomer, 0, 0, false, t0), "the replacement did not start");
    KT_CHECK(run_until(
                 link, members, 30000,
                 [&] {
        g.replacement.step(members[leader - 1], members[leader - 1].status(), clock::monotonic_ns());
        return !g.replacement.active();
                 }),
             "the replacement did not end in 30 s (step %u)", static_cast<unsigned>(g.replacement.status().step));
    const auto done = g.replacement.status();
    KT_CHECK(done.step == cluster_abi::ReplaceStep::Done, "the replacement failed (failure %u, engine code %d)",
             static_cast<unsigned>(done.failure), done.code);
    const uint64_t replace_ms = (clock::monotonic_ns() - t0) / kMs;
    const kraft::MemberStatus after = members[leader - 1].status();
    unsigned voter_count = 0;
    bool newcomer_votes = false, dead_listed = false;
    for (uint8_t i = 0; i < after.server_count; ++i) {
        voter_count += after.servers[i].role == RAFT_VOTER;
        newcomer_votes = newcomer_votes || (after.servers[i].id == kNewcomer && after.servers[i].role == RAFT_VOTER);
        dead_listed = dead_listed || after.servers[i].id == dead;
    }
    KT_CHECK(voter_count == 3 && newcomer_votes && !dead_listed,
             "the configuration after the replacement: %u voters, newcomer voting %d, dead listed %d", voter_count,
             newcomer_votes, dead_listed);
    // The newcomer holds what the group applied (it installed the leader's snapshot: the log's
    // start was compacted away), and commits with the other two.
    if (!propose(link, members, leader, 1000, 20))
        return false;
    KT_CHECK(run_until(link, members, 15000, [&] { return agreed(members, 80); }),
             "the newcomer and the two voters did not apply 80 commands alike");
    const kraft::MemberStatus newcomer = members[kNewcomer - 1].status();
    KT_CHECK(newcomer.member && newcomer.snapshots_installed >= 1,
             "the newcomer is in the configuration %d, installed %llu snapshots", newcomer.member,
             static_cast<unsigned long long>(newcomer.snapshots_installed));

    // The dead voter back on its disk: it still believes in the old configuration, and the group
    // (which removed it) keeps its leader and term.
    const uint64_t term = members[leader - 1].status().term;
    KT_CHECK(members[dead - 1].start(kGroup, dead, voters, link, g.disks[dead - 1], kKey, 2),
             "the dead voter did not start again");
    KT_CHECK(members[dead - 1].recovered_term() == dead_before.term, "the dead voter lost its term");
    // Asking the others for votes, it is recognised as removed (its log stops before the
    // configuration committed without it); told so, it asks no more.
    uint64_t told_by = 0;
    (void)run_until(link, members, 3000, [&] {
        for (uint64_t id = 1; id <= kNewcomer; ++id)
            if (id != dead && members[id - 1].running() && members[id - 1].take_outsider() == dead)
                told_by = id;
        return false;
    });
    const kraft::MemberStatus held = members[leader - 1].status();
    KT_CHECK(held.is_leader && held.term == term,
             "the removed voter disturbed the group (leader %d, term %llu -> %llu)", held.is_leader,
             static_cast<unsigned long long>(term), static_cast<unsigned long long>(held.term));
    KT_CHECK(told_by != 0, "no member took the restarted voter's vote requests for a removed voter's");
    members[dead - 1].set_removed(members[told_by - 1].status().term);
    KT_CHECK(members[dead - 1].status().removed, "the removed voter did not take the notice");
    const uint64_t sent_then = members[dead - 1].status().sent;
    (void)run_until(link, members, 3000, [] { return false; });
    KT_CHECK(members[dead - 1].status().sent == sent_then, "the removed voter still asks for votes (%llu datagrams)",
             static_cast<unsigned long long>(members[dead - 1].status().sent - sent_then));
    if (!propose(link, members, leader, 2000, 5))
        return false;
    KT_CHECK(run_until(
                 link, members, 15000,
                 [&] {
        return members[leader - 1].status().applied == 85 && members[kNewcomer - 1].status().applied == 85;
                 }),
             "the group did not go on after the removed voter came back");

    if (!released(g, *mem, before))
        return false;
    console::printf(
        "ktest:   raftreplace: voter %llu replaced by newcomer %llu in %llu ms (it installed %llu "
        "snapshots), 20 more applied by the new three; the removed voter restarted (told so, it stopped asking for votes), leader %llu kept term "
        "%llu\n",
        static_cast<unsigned long long>(dead), static_cast<unsigned long long>(kNewcomer),
        static_cast<unsigned long long>(replace_ms), static_cast<unsigned long long>(newcomer.snapshots_installed),
        static_cast<unsigned long long>(leader), static_cast<unsigned long long>(term));
    return true;
}

} // namespace ktest
