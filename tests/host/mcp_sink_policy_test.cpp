// The sink policy's conformance table (the adapter contract) and the proposal book (the gateway
// contract): missing token -> BLOCK; token/provenance mismatch -> BLOCK; a valid token on a
// non-critical or trusted target -> ALLOW; untrusted input on a critical sink -> STEP_UP
// whatever the caller (the role is not even an input); boot arguments only widen; proposals are
// decided by someone else than their proposer, expire, and are refused when their target moved.
#include <mcp/policy/proposal_book.h>
#include <mcp/policy/sink_policy.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using mcp::Decision;
using mcp::Integrity;
using mcp::Sink;
using mcp::SinkCall;
using mcp::SinkRules;
using mcp::Verdict;

TEST(SinkPolicy, ConformanceTable) {
    const SinkRules rules;
    struct Row {
        bool token, matches;
        Integrity integrity;
        Sink sink;
        bool approved;
        Verdict want;
        const char* reason;
    };
    const Row table[] = {
        { false, false, Integrity::Untrusted, Sink::Drop, false, Verdict::Block, "token_missing" },
        { false, true, Integrity::Trusted, Sink::None, true, Verdict::Block, "token_missing" },
        { true, false, Integrity::Untrusted, Sink::Drop, false, Verdict::Block, "token_mismatch" },
        { true, false, Integrity::Trusted, Sink::None, true, Verdict::Block, "token_mismatch" },
        { true, true, Integrity::Untrusted, Sink::None, false, Verdict::Allow, "no_sink" },
        { true, true, Integrity::Untrusted, Sink::Write, false, Verdict::Allow, "not_critical" },
        { true, true, Integrity::Untrusted, Sink::Delete, false, Verdict::Allow, "not_critical" },
        { true, true, Integrity::Trusted, Sink::Drop, false, Verdict::Allow, "trusted" },
        { true, true, Integrity::Untrusted, Sink::Drop, false, Verdict::StepUp, "untrusted_critical_sink" },
        { true, true, Integrity::Untrusted, Sink::BulkDelete, false, Verdict::StepUp, "untrusted_critical_sink" },
        { true, true, Integrity::Untrusted, Sink::Drop, true, Verdict::Allow, "approved" },
    };
    for (const auto& row : table) {
        SinkCall c;
        c.token_present = row.token;
        c.token_matches = row.matches;
        c.integrity = row.integrity;
        c.sink = row.sink;
        c.approved = row.approved;
        Decision d = mcp::decide(rules, c);
        EXPECT_EQ(d.verdict, row.want) << mcp::sink_name(row.sink) << " " << row.reason;
        EXPECT_STREQ(d.reason, row.reason);
    }
    EXPECT_STREQ(mcp::verdict_name(Verdict::StepUp), "STEP_UP");
}

TEST(SinkPolicy, BootArgumentsOnlyWiden) {
    SinkRules rules;
    EXPECT_EQ(rules.delete_sink(100), Sink::Delete);
    EXPECT_EQ(rules.delete_sink(101), Sink::BulkDelete);
    rules.lower_delete_threshold(500);
    EXPECT_EQ(rules.delete_over, 100u) << "a higher threshold would narrow the policy";
    rules.lower_delete_threshold(10);
    EXPECT_EQ(rules.delete_sink(11), Sink::BulkDelete);
    EXPECT_FALSE(rules.add_sinks("write,nonsense"));
    EXPECT_FALSE(rules.critical_sink(Sink::Write)) << "a list with an unknown name changes nothing";
    EXPECT_TRUE(rules.add_sinks("write,create"));
    EXPECT_TRUE(rules.critical_sink(Sink::Write));
    EXPECT_TRUE(rules.critical_sink(Sink::Create));
    EXPECT_TRUE(rules.critical_sink(Sink::Drop)) << "defaults stay";
    EXPECT_TRUE(rules.critical_sink(Sink::BulkDelete));
    EXPECT_FALSE(rules.critical_sink(Sink::Delete));
    EXPECT_TRUE(rules.add_sinks("delete"));
    EXPECT_TRUE(rules.critical_sink(Sink::Delete));
    EXPECT_FALSE(rules.critical_sink(Sink::None));
}

namespace {
mcp::Principal principal(uint16_t id, const char* name) {
    mcp::Principal p;
    p.id = id;
    snprintf(p.name, sizeof p.name, "%s", name);
    p.role = mcp::Role::Admin;
    p.scopes = mcp::kAllScopes;
    return p;
}
constexpr uint64_t kSecond = 1'000'000'000;
} // namespace

TEST(ProposalBook, FourEyesExpiryAndStaleTargets) {
    auto book = std::make_unique<mcp::ProposalBook>();
    const auto alice = principal(1, "alice"), bob = principal(2, "bob");
    const mcp::TargetFacts docs { true, 9, 1234, 77 };
    mcp::ProposalBook::Draft d;
    d.sink = Sink::Drop;
    d.tool = "collection_drop";
    d.target = "docs";
    d.args = R"({"name":"docs"})";
    d.facts = docs;
    d.proposer = &alice;
    d.provenance = 42;
    d.now_ns = 10 * kSecond;
    d.created_at = "2026-11-26T10:00:00Z";
    auto id = book->submit(d);
    ASSERT_TRUE(id.ok());
    const mcp::Proposal* p = book->find(*id);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->state, mcp::ProposalState::Pending);
    EXPECT_EQ(p->arguments(), R"({"name":"docs"})") << "exactly what runs when approved";
    EXPECT_EQ(p->expires_ns, 10 * kSecond + mcp::ProposalBook::kLifetimeNs);

    using R = mcp::ProposalBook::Refusal;
    EXPECT_EQ(book->approve(*id, alice, 43, docs, 11 * kSecond), R::OwnProposal) << "never the proposer's own";
    EXPECT_EQ(book->reject(*id, alice, 43, 11 * kSecond), R::OwnProposal);
    EXPECT_EQ(book->approve(999, bob, 44, docs, 11 * kSecond), R::Unknown);
    EXPECT_EQ(book->approve(*id, bob, 44, docs, 12 * kSecond), R::None);
    EXPECT_EQ(p->state, mcp::ProposalState::Approved);
    EXPECT_STREQ(p->decider_name, "bob");
    EXPECT_EQ(p->decided_provenance, 44u);
    EXPECT_EQ(book->approve(*id, bob, 45, docs, 13 * kSecond), R::NotPending) << "runs once";
    EXPECT_STREQ(mcp::refusal_reason(R::NotPending), "already_decided");

    // A write since the proposal: approving would run something else than was proposed.
    auto second = book->submit(d);
    ASSERT_TRUE(second.ok());
    EXPECT_NE(*second, *id);
    mcp::TargetFacts moved = docs;
    moved.generation = 78;
    EXPECT_EQ(book->approve(*second, bob, 46, moved, 14 * kSecond), R::Stale);
    EXPECT_EQ(book->find(*second)->state, mcp::ProposalState::Stale);

    // Expiry.
    auto third = book->submit(d);
    ASSERT_TRUE(third.ok());
    const uint64_t late = 10 * kSecond + mcp::ProposalBook::kLifetimeNs;
    EXPECT_EQ(book->approve(*third, bob, 47, docs, late), R::Expired);
    EXPECT_EQ(book->find(*third)->state, mcp::ProposalState::Expired);
    EXPECT_EQ(book->reject(*third, bob, 47, late), R::Expired);

    // An approved proposal whose call could not be started is pending again, for anyone but its proposer.
    auto retry = book->submit(d);
    ASSERT_EQ(book->approve(*retry, bob, 49, docs, 15 * kSecond), R::None);
    book->reopen(*retry);
    EXPECT_EQ(book->find(*retry)->state, mcp::ProposalState::Pending);
    EXPECT_STREQ(book->find(*retry)->decider_name, "");
    EXPECT_EQ(book->approve(*retry, bob, 50, docs, 16 * kSecond), R::None);
    mcp::TargetFacts recreated = docs;
    recreated.serial = docs.serial + 1;
    auto other = book->submit(d);
    EXPECT_EQ(book->approve(*other, bob, 51, recreated, 17 * kSecond), R::Stale)
        << "dropped and made again: another collection";

    // Rejection.
    auto fourth = book->submit(d);
    EXPECT_EQ(book->reject(*fourth, bob, 48, 20 * kSecond), R::None);
    EXPECT_EQ(book->find(*fourth)->state, mcp::ProposalState::Rejected);
}

TEST(ProposalBook, BoundedWithoutPushingOutPendingOnes) {
    auto book = std::make_unique<mcp::ProposalBook>();
    const auto alice = principal(1, "alice"), bob = principal(2, "bob");
    mcp::ProposalBook::Draft d;
    d.tool = "vector_delete";
    d.target = "docs";
    d.args = "{}";
    d.proposer = &alice;
    d.now_ns = kSecond;
    uint32_t first = 0;
    for (size_t i = 0; i < mcp::ProposalBook::kMaxPerProposer; ++i) {
        auto id = book->submit(d);
        ASSERT_TRUE(id.ok());
        first = first ? first : *id;
    }
    EXPECT_EQ(book->submit(d).error(), ktl::Error::Exhausted) << "one caller cannot fill the book for everyone";
    std::vector<mcp::Principal> others;
    for (uint16_t i = 0; i < 3; ++i)
        others.push_back(principal(uint16_t(10 + i), "other"));
    for (const auto& who : others) {
        d.proposer = &who;
        for (size_t i = 0; i < mcp::ProposalBook::kMaxPerProposer; ++i)
            ASSERT_TRUE(book->submit(d).ok());
    }
    const auto late = principal(20, "late");
    d.proposer = &late;
    EXPECT_EQ(book->submit(d).error(), ktl::Error::Full) << "16 pending: none is pushed out";
    ASSERT_EQ(book->reject(first, bob, 0, 2 * kSecond), mcp::ProposalBook::Refusal::None);
    auto reused = book->submit(d);
    ASSERT_TRUE(reused.ok()) << "a decided slot is reused";
    EXPECT_EQ(book->find(first), nullptr);
    std::string huge(mcp::Proposal::kMaxArgs + 1, ' ');
    d.args = huge;
    EXPECT_EQ(book->submit(d).error(), ktl::Error::InvalidArgs);
    mcp::Principal nobody;
    d.args = "{}";
    d.proposer = &nobody;
    EXPECT_EQ(book->submit(d).error(), ktl::Error::AccessDenied) << "anonymous proposals could never be told apart";
}
