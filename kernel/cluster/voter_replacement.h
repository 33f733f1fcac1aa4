#pragma once
// Replacing a dead voter of the consensus group (issue 35; docs/replication.md), run by the
// leader one configuration change at a time, each committed before the next: the newcomer added
// (a spare: not replicated to, no vote), made a standby (replicated to: it takes the log, or the
// snapshot and the collections it covers), promoted to voter once its log reaches the commit
// (upstream promotes only a caught-up server), and then the dead voter removed. Between the
// promotion and the removal the group has one voter more (a majority of it is still reachable:
// every other voter is alive). Nothing is lost on a failure: each step leaves a configuration the
// group can run on, and the request may be made again (a newcomer already added is not added twice).
#include <cstdint>

#include <abi/cluster.h>

#include "../raft/raft_member.h"

namespace clusterd {

class VoterReplacement {
public:
    // The newcomer has this long to catch up (a standby whose match index reaches the commit).
    static constexpr uint64_t kCatchUpNs = 180'000'000'000ull;

    // Starts replacing voter `dead` by `with` (raft ids; addresses for the status) at this member,
    // which leads. False if one runs (nothing changed).
    bool start(uint64_t dead, uint64_t with, uint32_t dead_ip, uint32_t with_ip, bool automatic, uint64_t now_ns);
    bool active() const { return m_status.active(); }
    // One round of the cluster task: the next step once the last one is committed.
    void step(kraft::Member& member, const kraft::MemberStatus& s, uint64_t now_ns);

    struct Status {
        cluster_abi::ReplaceStep step;
        cluster_abi::ReplaceFailure failure;
        bool automatic;
        int32_t code;
        uint32_t dead_ip, with_ip;
        uint64_t started_ns, ended_ns, done;
        bool active() const {
            return step != cluster_abi::ReplaceStep::None && step != cluster_abi::ReplaceStep::Done &&
                   step != cluster_abi::ReplaceStep::Failed;
        }
        void fill(cluster_abi::ClusterInfo& out, uint64_t now_ns) const;
    };
    Status status() const { return m_status; }

private:
    void fail(cluster_abi::ReplaceFailure why, int code, uint64_t now_ns);
    void finish(uint64_t now_ns);
    void enter(cluster_abi::ReplaceStep step, uint64_t now_ns);
    // A step's change asked of the engine (rv its answer): its commit awaited from the next round.
    void issue(int rv, uint64_t now_ns);

    Status m_status {};
    uint64_t m_dead = 0, m_with = 0;
    uint64_t m_step_since_ns = 0;
    bool m_issued = false; // the step's change was asked for: its commit is awaited
};

} // namespace clusterd
