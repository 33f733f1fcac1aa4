#include "proposal_book.h"

#include <ktl/utf8.h>

namespace mcp {

const char* proposal_state_name(ProposalState state) {
    switch (state) {
    case ProposalState::Pending: return "pending";
    case ProposalState::Approved: return "approved";
    case ProposalState::Rejected: return "rejected";
    case ProposalState::Expired: return "expired";
    case ProposalState::Stale: return "stale";
    }
    return "pending";
}

const char* refusal_reason(ProposalBook::Refusal refusal) {
    switch (refusal) {
    case ProposalBook::Refusal::None: return "";
    case ProposalBook::Refusal::Unknown: return "unknown_proposal";
    case ProposalBook::Refusal::NotPending: return "already_decided";
    case ProposalBook::Refusal::Expired: return "proposal_expired";
    case ProposalBook::Refusal::OwnProposal: return "own_proposal";
    case ProposalBook::Refusal::Stale: return "target_changed";
    }
    return "unknown_proposal";
}

ktl::Result<uint32_t> ProposalBook::submit(const Draft& d) {
    if (d.args.size() > Proposal::kMaxArgs)
        return ktl::Error::InvalidArgs;
    if (!d.proposer || d.proposer->id == 0)
        return ktl::Error::AccessDenied;
    expire(d.now_ns);
    size_t own = 0;
    for (const auto& s : m_slots)
        own += s.id && s.state == ProposalState::Pending && s.proposer == d.proposer->id;
    if (own >= kMaxPerProposer)
        return ktl::Error::Exhausted;
    // A free slot, else the oldest decided one: pending proposals are never pushed out.
    Proposal* p = nullptr;
    for (auto& s : m_slots) {
        if (s.id == 0) {
            p = &s;
            break;
        }
        if (s.state != ProposalState::Pending && (!p || s.id < p->id))
            p = &s;
    }
    if (!p)
        return ktl::Error::Full;
    p->id = m_next_id++;
    if (m_next_id == 0)
        m_next_id = 1;
    p->state = ProposalState::Pending;
    p->sink = d.sink;
    ktl::utf8_copy(p->tool, d.tool);
    ktl::utf8_copy(p->target, d.target);
    p->ids = d.ids;
    p->facts = d.facts;
    p->proposer = d.proposer->id;
    ktl::utf8_copy(p->proposer_name, d.proposer->name);
    p->provenance = d.provenance;
    p->decider = 0;
    p->decider_name[0] = '\0';
    p->decided_provenance = 0;
    p->created_ns = d.now_ns;
    p->expires_ns = d.now_ns + kLifetimeNs;
    ktl::utf8_copy(p->created_at, d.created_at);
    for (size_t i = 0; i < d.args.size(); ++i)
        p->args[i] = d.args[i];
    p->args_len = static_cast<uint32_t>(d.args.size());
    return p->id;
}

Proposal* ProposalBook::slot(uint32_t id) {
    for (auto& s : m_slots)
        if (id != 0 && s.id == id)
            return &s;
    return nullptr;
}

const Proposal* ProposalBook::find(uint32_t id) const {
    for (const auto& s : m_slots)
        if (id != 0 && s.id == id)
            return &s;
    return nullptr;
}

void ProposalBook::expire(uint64_t now_ns) {
    for (auto& s : m_slots)
        if (s.id && s.state == ProposalState::Pending && now_ns >= s.expires_ns)
            s.state = ProposalState::Expired;
}

ProposalBook::Refusal ProposalBook::decidable(Proposal* p, const Principal& who, uint64_t now_ns) {
    if (!p)
        return Refusal::Unknown;
    expire(now_ns);
    if (p->state == ProposalState::Expired)
        return Refusal::Expired;
    if (p->state != ProposalState::Pending)
        return Refusal::NotPending;
    // Four eyes: whoever proposed cannot decide, whatever role it holds.
    if (who.id == p->proposer)
        return Refusal::OwnProposal;
    return Refusal::None;
}

ProposalBook::Refusal ProposalBook::approve(uint32_t id, const Principal& approver, uint64_t provenance,
                                            const TargetFacts& now_facts, uint64_t now_ns) {
    Proposal* p = slot(id);
    Refusal r = decidable(p, approver, now_ns);
    if (r != Refusal::None)
        return r;
    p->decider = approver.id;
    ktl::utf8_copy(p->decider_name, approver.name);
    p->decided_provenance = provenance;
    if (!(now_facts == p->facts)) {
        p->state = ProposalState::Stale; // what was approved is no longer what would run
        return Refusal::Stale;
    }
    p->state = ProposalState::Approved;
    return Refusal::None;
}

void ProposalBook::reopen(uint32_t id) {
    Proposal* p = slot(id);
    if (!p || p->state != ProposalState::Approved)
        return;
    p->state = ProposalState::Pending;
    p->decider = 0;
    p->decider_name[0] = '\0';
    p->decided_provenance = 0;
}

ProposalBook::Refusal ProposalBook::reject(uint32_t id, const Principal& who, uint64_t provenance, uint64_t now_ns) {
    Proposal* p = slot(id);
    Refusal r = decidable(p, who, now_ns);
    if (r != Refusal::None)
        return r;
    p->state = ProposalState::Rejected;
    p->decider = who.id;
    ktl::utf8_copy(p->decider_name, who.name);
    p->decided_provenance = provenance;
    return Refusal::None;
}

} // namespace mcp
