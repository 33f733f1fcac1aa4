// The named vector store and the grants vector tools run under: a task given a token for one
// collection can use that collection with the token's rights and reach nothing else (not the
// other collection, not the store), the way the MCP bridge runs vector tools (tool_exec.cpp).
#include "cases.h"

#include <cap/capability.h>
#include <hnsw/params.h>

namespace ktest {
namespace {

constexpr uint32_t kDim = 4;
constexpr uint64_t kBinding = 0x5eed;

int64_t create(uint32_t store, const char* name, uint64_t len) {
    abi::CreateParams p { kDim, 0, 8, 32, 64, 64, 0 };
    return sys::store_create(store, name, len, &p);
}

int64_t open(uint32_t store, const char* name, uint32_t rights) {
    uint64_t len = 0;
    while (name[len])
        ++len;
    return sys::store_open(store, name, len, rights);
}

// Ten vectors with ids base+1..base+10 along the first axis.
bool fill(uint32_t coll, uint64_t base) {
    uint64_t ids[10];
    float rows[10 * kDim] = {};
    for (uint32_t i = 0; i < 10; ++i) {
        ids[i] = base + i + 1;
        rows[i * kDim] = static_cast<float>(i);
        rows[i * kDim + 1] = 1.0f;
    }
    return sys::vec_insert(coll, ids, rows, 10, 0) == 10;
}

// What a vector tool task does with what it was given.
struct Probe {
    uint32_t token = ~0u;
    int64_t granted = -1;
    int64_t search = -1;             // hits on the granted collection
    bool only_own_ids = true;        // every hit from that collection
    int64_t insert = 0;              // through a read-only grant
    uint32_t other_slots_usable = 0; // slots besides the grant that reach any collection or the store
};
Probe g_probe;

int64_t tool_like_task(void*) {
    Probe& p = g_probe;
    p.granted = sys::token_redeem(p.token, kBinding);
    if (p.granted < 0)
        return 1;
    float q[kDim] = { 3.0f, 1.0f, 0.0f, 0.0f };
    hnsw::Hit hits[10];
    p.search = sys::vec_search(p.granted, q, 10, 32, hits, nullptr);
    for (int64_t i = 0; i < p.search; ++i)
        p.only_own_ids = p.only_own_ids && hits[i].id >= 1 && hits[i].id <= 10;
    uint64_t id = 99;
    p.insert = sys::vec_insert(p.granted, &id, q, 1, 0);
    // Every other slot: no collection (stats), no store (list) answers.
    abi::VectorStats st {};
    abi::StoreEntry rows[2];
    for (uint32_t slot = 0; slot < cap::kCapSlots; ++slot) { // every slot a table has
        if (slot == static_cast<uint32_t>(p.granted))
            continue;
        if (sys::vec_stats(slot, &st) >= 0 || sys::store_list(slot, rows, 2) >= 0)
            ++p.other_slots_usable;
    }
    return 0;
}

} // namespace

bool vector_grants(const Caps& caps) {
    const int64_t bad = -int64_t(ktl::Error::InvalidArgs);
    KT_CHECK(create(caps.store, "..", 2) == bad, "'..' must be refused as a name");
    KT_CHECK(create(caps.store, "a/b", 3) == bad, "'/' must be refused in a name");
    KT_CHECK(create(caps.store, "mine", 4) == 0, "store_create mine");
    KT_CHECK(create(caps.store, "theirs", 6) == 0, "store_create theirs");
    KT_CHECK(create(caps.store, "mine", 4) == -int64_t(ktl::Error::Exists), "a second 'mine' must be refused");
    int64_t mine = open(caps.store, "mine", abi::kRead | abi::kWrite | abi::kGrant);
    int64_t theirs = open(caps.store, "theirs", abi::kRead | abi::kWrite);
    KT_CHECK(mine >= 0 && theirs >= 0, "store_open -> %lld %lld", (long long)mine, (long long)theirs);
    KT_CHECK(open(caps.store, "nobody", abi::kRead) == -int64_t(ktl::Error::NotFound), "open of an absent name");
    KT_CHECK(open(caps.store, "mine", abi::kRevoke) == bad, "open may not hand out Revoke");
    KT_CHECK(fill(static_cast<uint32_t>(mine), 0) && fill(static_cast<uint32_t>(theirs), 100), "fill both");

    // Without Grant on the store, no collection can be opened (tool tasks never hold Grant).
    int64_t weak = sys::cap_mint(caps.store, abi::kRead | abi::kWrite, 0);
    KT_CHECK(weak >= 0, "cap_mint");
    KT_CHECK(open(static_cast<uint32_t>(weak), "theirs", abi::kRead) == -int64_t(ktl::Error::AccessDenied),
             "store_open without Grant");
    sys::cap_delete(weak);

    // A tool-like task with an empty table and a read token for "mine" only.
    int64_t task = spawn(caps, "tool:probe", tool_like_task, nullptr, 5);
    KT_CHECK(task >= 0, "spawn");
    g_probe = Probe {};
    int64_t tok = sys::token_issue(mine, task, abi::kRead, kBinding, 5000 * kMs);
    KT_CHECK(tok >= 0, "token_issue -> %lld", (long long)tok);
    g_probe.token = static_cast<uint32_t>(tok);
    KT_CHECK(join(static_cast<uint32_t>(task), 10000 * kMs) == 0, "the probe could not redeem its token");
    KT_CHECK(g_probe.search == 10 && g_probe.only_own_ids, "search through the grant -> %lld, own ids %d",
             (long long)g_probe.search, g_probe.only_own_ids);
    KT_CHECK(g_probe.insert == -int64_t(ktl::Error::AccessDenied), "insert through a read grant -> %lld",
             (long long)g_probe.insert);
    KT_CHECK(g_probe.other_slots_usable == 0, "%u other slots reached a collection or the store",
             g_probe.other_slots_usable);

    abi::StoreEntry rows[abi::kMaxNamed];
    KT_CHECK(sys::store_list(caps.store, rows, abi::kMaxNamed) == 2, "list 2");
    KT_CHECK(sys::store_drop(caps.store, "mine", 4) == 0, "drop mine");
    // Dropping kills every capability to the collection, the runner's own included.
    abi::VectorStats st {};
    KT_CHECK(sys::vec_stats(mine, &st) < 0, "a dropped collection still answers");
    KT_CHECK(sys::store_drop(caps.store, "theirs", 6) == 0, "drop theirs");
    KT_CHECK(sys::store_list(caps.store, rows, abi::kMaxNamed) == 0, "list 0");
    // The store's rights are split: a capability for creating collections cannot drop one, and a
    // collection is opened with no more than the store is held.
    int64_t creator = sys::cap_mint(caps.store, abi::kCreate, 0);
    int64_t reader = sys::cap_mint(caps.store, abi::kRead | abi::kGrant, 0);
    KT_CHECK(creator >= 0 && reader >= 0, "cap_mint");
    KT_CHECK(create(static_cast<uint32_t>(creator), "third", 5) == 0, "store_create with Create");
    KT_CHECK(sys::store_drop(creator, "third", 5) == -int64_t(ktl::Error::AccessDenied), "store_drop with Create only");
    KT_CHECK(open(static_cast<uint32_t>(reader), "third", abi::kRead | abi::kWrite) ==
                 -int64_t(ktl::Error::AccessDenied),
             "store_open for more than the store is held");
    int64_t third = open(static_cast<uint32_t>(reader), "third", abi::kRead);
    KT_CHECK(third >= 0, "store_open within what is held");
    sys::cap_delete(third);
    sys::cap_delete(creator);
    sys::cap_delete(reader);
    KT_CHECK(sys::store_drop(caps.store, "third", 5) == 0, "drop third");
    console::printf("ktest:   vecgrant: a read token for one collection reaches it alone (0 of the table's %u other "
                    "slots), no writes, no store; Create cannot drop; open within what is held\n",
                    cap::kCapSlots - 1);
    return true;
}

} // namespace ktest
