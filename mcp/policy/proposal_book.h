#pragma once
// Proposals (the gateway contract: a model changes important state only through a proposal,
// draft -> validated -> submitted, never by a direct write). A call the sink policy holds back
// (STEP_UP) from a client that cannot be asked becomes a proposal: its exact effect (the tool and
// its argument text), what it would act on and the state of that target when it was proposed.
// Only a principal other than the proposer, holding proposal:approve, may approve or reject it;
// it expires; and approval checks the target again: a proposal whose target changed since (a
// write, a drop, a new collection of that name) is refused as stale and never runs.
// Bounded: 16 proposals of at most 20 KiB of arguments; a slot is reused once decided or expired.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ktl/result.h>

#include "key_store.h"
#include "sink_policy.h"

namespace mcp {

// The target as the store has it: whether the collection exists, which one it is (a name dropped
// and made again is another), how many vectors it holds and its write generation (every upsert
// and delete moves it).
struct TargetFacts {
    bool exists = false;
    uint64_t serial = 0;
    uint64_t count = 0;
    uint64_t generation = 0;
    bool operator==(const TargetFacts&) const = default;
};

enum class ProposalState : uint8_t { Pending, Approved, Rejected, Expired, Stale };
const char* proposal_state_name(ProposalState state); // "pending", ...

struct Proposal {
    static constexpr size_t kMaxArgs = 20480;
    uint32_t id = 0; // 0: a free slot
    ProposalState state = ProposalState::Pending;
    Sink sink = Sink::None;
    char tool[32] = "";
    char target[72] = "";  // the collection
    uint64_t ids = 0;      // how many ids the call names (deletes)
    TargetFacts facts;     // the target when proposed
    uint16_t proposer = 0; // principal id
    char proposer_name[Principal::kNameMax + 1] = "";
    uint64_t provenance = 0; // the proposing request's node
    uint16_t decider = 0;
    char decider_name[Principal::kNameMax + 1] = "";
    uint64_t decided_provenance = 0;
    uint64_t created_ns = 0;
    uint64_t expires_ns = 0;
    char created_at[24] = ""; // RFC 3339
    uint32_t args_len = 0;
    char args[kMaxArgs]; // the call's arguments as JSON text: exactly what runs if approved
    std::string_view arguments() const { return { args, args_len }; }
};

class ProposalBook {
public:
    static constexpr size_t kMaxProposals = 16;
    static constexpr uint64_t kLifetimeNs = 15ull * 60 * 1'000'000'000; // 15 minutes to decide

    struct Draft {
        Sink sink = Sink::None;
        std::string_view tool;
        std::string_view target;
        std::string_view args;
        uint64_t ids = 0;
        TargetFacts facts;
        const Principal* proposer = nullptr;
        uint64_t provenance = 0;
        uint64_t now_ns = 0;
        std::string_view created_at;
    };
    // Submits a draft; its id. InvalidArgs: arguments over kMaxArgs; AccessDenied: an anonymous
    // proposer (nobody could ever be told apart from it); Exhausted: the proposer already has
    // kMaxPerProposer pending (one caller cannot fill the book for everyone); Full: every slot
    // holds a pending proposal.
    static constexpr size_t kMaxPerProposer = 4;
    ktl::Result<uint32_t> submit(const Draft& draft);

    enum class Refusal : uint8_t { None, Unknown, NotPending, Expired, OwnProposal, Stale };
    // Approve: pending, not expired, not the proposer's own, and the target as it was (else the
    // proposal becomes Stale and is refused). The caller then runs proposal->arguments().
    Refusal approve(uint32_t id, const Principal& approver, uint64_t provenance, const TargetFacts& now_facts,
                    uint64_t now_ns);
    Refusal reject(uint32_t id, const Principal& who, uint64_t provenance, uint64_t now_ns);
    // An approved proposal whose call could not be started after all (no task slot, no memory):
    // pending again, to be approved once more.
    void reopen(uint32_t id);
    const Proposal* find(uint32_t id) const;
    // Pending proposals past their time become Expired.
    void expire(uint64_t now_ns);
    template <typename F>
    void for_each(F&& f) const {
        for (const auto& p : m_slots)
            if (p.id)
                f(p);
    }

private:
    Proposal* slot(uint32_t id);
    Refusal decidable(Proposal* p, const Principal& who, uint64_t now_ns);
    Proposal m_slots[kMaxProposals];
    uint32_t m_next_id = 1;
};

const char* refusal_reason(ProposalBook::Refusal refusal); // "unknown_proposal", ...

} // namespace mcp
