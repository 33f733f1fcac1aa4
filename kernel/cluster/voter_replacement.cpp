#include "voter_replacement.h"

#include "../log.h"

namespace clusterd {
namespace {

using Step = cluster_abi::ReplaceStep;
using Failure = cluster_abi::ReplaceFailure;

const char* step_name(Step step) {
    switch (step) {
    case Step::Adding: return "adding the newcomer";
    case Step::Standby: return "replicating to the newcomer";
    case Step::Promoting: return "promoting the newcomer to voter";
    case Step::Removing: return "removing the dead voter";
    case Step::Done: return "done";
    default: return "-";
    }
}

} // namespace

bool VoterReplacement::start(uint64_t dead, uint64_t with, uint32_t dead_ip, uint32_t with_ip, bool automatic,
                             uint64_t now_ns) {
    if (active())
        return false;
    const uint64_t done = m_status.done;
    m_status = Status {};
    m_status.done = done;
    m_status.step = Step::Adding;
    m_status.automatic = automatic;
    m_status.dead_ip = dead_ip;
    m_status.with_ip = with_ip;
    m_status.started_ns = now_ns;
    m_dead = dead;
    m_with = with;
    m_issued = false;
    m_step_since_ns = now_ns;
    KLOG_INFO("cluster: replacing voter %u.%u.%u.%u by %u.%u.%u.%u%s", dead_ip >> 24, (dead_ip >> 16) & 255,
              (dead_ip >> 8) & 255, dead_ip & 255, with_ip >> 24, (with_ip >> 16) & 255, (with_ip >> 8) & 255,
              with_ip & 255, automatic ? " (automatic: dead past raft_replace_after_s)" : "");
    return true;
}

void VoterReplacement::fail(Failure why, int code, uint64_t now_ns) {
    KLOG_WARN("cluster: the voter replacement failed while %s (%s, engine code %d): the configuration stays as it is",
              step_name(m_status.step),
              why == Failure::LeadershipLost    ? "this node no longer leads"
              : why == Failure::CatchUpTimedOut ? "the newcomer did not catch up in time"
              : why == Failure::Changed         ? "the configuration changed under it"
                                                : "the engine refused the change",
              code);
    m_status.failure = why;
    m_status.code = code;
    m_status.step = Step::Failed;
    m_status.ended_ns = now_ns;
}

void VoterReplacement::issue(int rv, uint64_t now_ns) {
    if (rv != 0) {
        fail(Failure::Refused, rv, now_ns);
        return;
    }
    m_issued = true;
}

void VoterReplacement::enter(Step step, uint64_t now_ns) {
    m_status.step = step;
    m_step_since_ns = now_ns;
}

void VoterReplacement::finish(uint64_t now_ns) {
    m_status.step = Step::Done;
    m_status.ended_ns = now_ns;
    ++m_status.done;
    KLOG_INFO("cluster: voter replaced in %llu ms", (unsigned long long)((now_ns - m_status.started_ns) / 1000000));
}

void VoterReplacement::step(kraft::Member& member, const kraft::MemberStatus& s, uint64_t now_ns) {
    if (!active())
        return;
    if (!s.is_leader) {
        fail(Failure::LeadershipLost, RAFT_LEADERSHIPLOST, now_ns);
        return;
    }
    if (m_issued) {
        if (s.change == 1)
            return; // not committed yet
        if (s.change < 0) {
            fail(s.change == -RAFT_LEADERSHIPLOST ? Failure::LeadershipLost : Failure::Refused, -s.change, now_ns);
            return;
        }
        m_issued = false;
        // (A standby assigned stays in Standby until it has caught up.)
        if (m_status.step == Step::Adding)
            enter(Step::Standby, now_ns);
        else if (m_status.step == Step::Promoting)
            enter(Step::Removing, now_ns);
        else if (m_status.step == Step::Removing)
            return finish(now_ns);
    }
    const kraft::MemberStatus::Server* with = s.server(m_with);
    const kraft::MemberStatus::Server* dead = s.server(m_dead);
    switch (m_status.step) {
    case Step::Adding:
        if (!dead || dead->role != RAFT_VOTER || (with && with->role == RAFT_VOTER))
            fail(Failure::Changed, 0, now_ns);
        else if (with) // (added by an earlier attempt)
            enter(Step::Standby, now_ns);
        else
            issue(member.change(kraft::ChangeKind::Add, m_with), now_ns);
        break;
    case Step::Standby:
        if (!with || with->role == RAFT_VOTER)
            fail(Failure::Changed, 0, now_ns);
        else if (with->role == RAFT_SPARE)
            issue(member.change(kraft::ChangeKind::Assign, m_with, RAFT_STANDBY), now_ns);
        else if (s.commit > 0 && with->match >= s.commit)
            enter(Step::Promoting, now_ns); // (promoted at the next round)
        else if (now_ns - m_step_since_ns > kCatchUpNs)
            fail(Failure::CatchUpTimedOut, 0, now_ns);
        break;
    case Step::Promoting: issue(member.change(kraft::ChangeKind::Assign, m_with, RAFT_VOTER), now_ns); break;
    case Step::Removing:
        if (!dead)
            finish(now_ns);
        else
            issue(member.change(kraft::ChangeKind::Remove, m_dead), now_ns);
        break;
    default: break;
    }
}

void VoterReplacement::Status::fill(cluster_abi::ClusterInfo& out, uint64_t now_ns) const {
    out.replace_step = static_cast<uint8_t>(step);
    out.replace_failure = static_cast<uint8_t>(failure);
    out.replace_automatic = automatic ? 1 : 0;
    out.replace_code = code;
    out.replace_dead_ip = dead_ip;
    out.replace_with_ip = with_ip;
    const uint64_t end = ended_ns ? ended_ns : now_ns;
    out.replace_ms = started_ns && end > started_ns ? (end - started_ns) / 1000000 : 0;
    out.replace_done = done;
}

} // namespace clusterd
