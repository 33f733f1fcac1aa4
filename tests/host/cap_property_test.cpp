// Property tests: thousands of random operations (seeded) over several tables and objects,
// checked step by step against a reference model built from std containers, plus invariants
// checked on the real system alone: no rights escalation along any derivation chain, badges
// preserved, revoke transitive, destroyed objects unreachable (also after registry reuse),
// tokens single-use, and no node leak once everything is removed.
#include <cap/capability.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using cap::ObjectId;
using cap::ObjectType;
using cap::Rights;
using cap::Slot;
using ktl::Error;

namespace {

constexpr Rights kAll = cap::rights::kAllDefined;
// Object types the generator draws from: a fixed span, so adding a type to rights.h does not
// shift the seeded operation streams (and with them the per-seed coverage checks below).
// Drawing kTypeSpan itself stands for an out-of-range type.
constexpr uint32_t kTypeSpan = 15;
static_assert(kTypeSpan <= cap::kObjectTypeCount);
std::array<int, 64> g_backing;

struct MCap {
    uint16_t table;
    Slot slot;
    uint64_t obj;
    ObjectType type;
    Rights rights;
    uint64_t badge;
    bool token;
    uint64_t expires;
    uint64_t binding;
    int parent; // uid, -1 for a root
};

struct MObj {
    ObjectType type;
    bool live;
    void* ptr;
};

// The reference model: plain maps, recursion-free helpers, no cleverness.
struct Model {
    std::map<int, MCap> caps;                    // uid -> capability
    std::map<std::pair<uint16_t, Slot>, int> at; // (table, slot) -> uid
    std::map<uint64_t, MObj> objects;            // every id ever issued (raw)
    std::vector<bool> table_live;
    size_t node_capacity = 0;
    int next_uid = 0;

    int uid_at(uint16_t t, Slot s) const {
        auto it = at.find({ t, s });
        return it == at.end() ? -1 : it->second;
    }
    bool obj_live(uint64_t raw) const {
        auto it = objects.find(raw);
        return it != objects.end() && it->second.live;
    }
    Slot lowest_free(uint16_t t) const {
        for (Slot s = 0; s < cap::kCapSlots; ++s)
            if (uid_at(t, s) < 0)
                return s;
        return cap::kNoSlot;
    }
    std::vector<int> descendants(int uid) const {
        std::vector<int> out;
        std::vector<int> frontier { uid };
        while (!frontier.empty()) {
            int u = frontier.back();
            frontier.pop_back();
            for (auto& [id, c] : caps)
                if (c.parent == u) {
                    out.push_back(id);
                    frontier.push_back(id);
                }
        }
        return out;
    }
    void erase(int uid) {
        const MCap& c = caps.at(uid);
        at.erase({ c.table, c.slot });
        caps.erase(uid);
    }
    size_t erase_subtree(int uid, bool include_self) {
        auto d = descendants(uid);
        for (int u : d)
            erase(u);
        if (include_self)
            erase(uid);
        return d.size() + (include_self ? 1 : 0);
    }
    size_t count_in(uint16_t t) const {
        size_t n = 0;
        for (auto& [k, v] : at)
            n += k.first == t;
        return n;
    }
    Slot place(MCap c) {
        int uid = next_uid++;
        caps[uid] = c;
        at[{ c.table, c.slot }] = uid;
        return c.slot;
    }
};

template <size_t MaxObjects, size_t MaxNodes, size_t MaxTables>
class Harness {
public:
    explicit Harness(uint32_t seed) : m_rng(seed) {
        m_model.node_capacity = MaxNodes;
        m_model.table_live.assign(MaxTables, false);
        m_tables.fill(nullptr);
    }

    void run(int steps) {
        for (int i = 0; i < steps && !::testing::Test::HasFatalFailure(); ++i) {
            m_step = i;
            m_now += pick(0, 40);
            step();
            check_state();
            max_nodes = std::max(max_nodes, m_model.caps.size());
        }
        teardown_and_check_no_leak();
    }

    size_t successes[12] = {};
    std::map<std::string, size_t> outcomes; // "op:error" -> count, to see which paths a run covers
    size_t max_nodes = 0;
    size_t dead_after_reuse = 0; // dead-capability checks made while its registry slot was reused

private:
    uint32_t pick(uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(m_rng); }
    bool chance(int percent) { return pick(0, 99) < uint32_t(percent); }

    Rights random_rights() {
        Rights r = Rights(pick(0, uint32_t(kAll)));
        if (chance(5))
            r |= Rights(1u << 5); // an undefined bit now and then
        return r;
    }
    uint64_t random_badge() { return chance(50) ? 0 : pick(1, 5); }

    // A table we have created at some time (live or destroyed), or -1.
    int random_table() {
        std::vector<int> known;
        for (size_t i = 0; i < MaxTables; ++i)
            if (m_tables[i])
                known.push_back(int(i));
        if (known.empty())
            return -1;
        return known[pick(0, uint32_t(known.size() - 1))];
    }
    Slot random_slot(int t) {
        if (chance(85)) {
            std::vector<Slot> used;
            for (auto& [k, v] : m_model.at)
                if (k.first == t)
                    used.push_back(k.second);
            if (!used.empty())
                return used[pick(0, uint32_t(used.size() - 1))];
        }
        return pick(0, cap::kCapSlots + 1);
    }
    uint64_t random_object() {
        if (m_model.objects.empty() || chance(3))
            return ObjectId { pick(0, MaxObjects + 1), pick(0, 3) }.raw();
        // Prefer live objects, but keep dead ones in play.
        std::vector<uint64_t> live, all;
        for (auto& [raw, o] : m_model.objects) {
            all.push_back(raw);
            if (o.live)
                live.push_back(raw);
        }
        auto& v = (!live.empty() && chance(80)) ? live : all;
        return v[pick(0, uint32_t(v.size() - 1))];
    }
    bool table_live(int t) const { return t >= 0 && m_model.table_live[size_t(t)]; }

    template <typename R>
    void expect_error(const R& r, Error e, const char* op) {
        ++outcomes[std::string(op) + ":" + ktl::error_name(e)];
        ASSERT_EQ(r.ok(), e == Error::None)
            << op << " step " << m_step << " got " << ktl::error_name(r.error()) << " want " << ktl::error_name(e);
        if (e != Error::None) {
            ASSERT_EQ(r.error(), e) << op << " step " << m_step << " got " << ktl::error_name(r.error()) << " want "
                                    << ktl::error_name(e);
        }
    }

    // Shared by grant_root and mint_token.
    Error expect_root(int t, uint64_t obj, Rights rights, bool token) {
        if (!table_live(t) || !m_model.obj_live(obj))
            return Error::BadHandle;
        ObjectType type = m_model.objects.at(obj).type;
        if (!cap::has_rights(cap::default_rights(type), rights))
            return Error::InvalidArgs;
        if (token && (rights & cap::rights::kManage) != Rights::None)
            return Error::InvalidArgs;
        if (m_model.lowest_free(uint16_t(t)) == cap::kNoSlot)
            return Error::Full;
        if (m_model.caps.size() == m_model.node_capacity)
            return Error::NoMemory;
        return Error::None;
    }

    void step() {
        uint32_t op = pick(0, 99);
        // Alternate churn with growth phases (shrinking operations mostly become mints), so the
        // node pool and the tables also get filled to capacity.
        const bool growth = (m_step / 400) % 2 == 1;
        const bool shrinks = (op >= 6 && op < 9) || op == 12 || (op >= 50 && op < 64) || op >= 91;
        if (growth && shrinks && chance(90))
            op = chance(70) ? 30 : 20;
        if (op < 6)
            op_create_object();
        else if (op < 9)
            op_destroy_object();
        else if (op < 12)
            op_create_table();
        else if (op < 13)
            op_destroy_table();
        else if (op < 25)
            op_grant_root();
        else if (op < 50)
            op_mint();
        else if (op < 56)
            op_revoke();
        else if (op < 64)
            op_remove();
        else if (op < 68)
            op_transfer();
        else if (op < 84)
            op_lookup();
        else if (op < 91)
            op_mint_token();
        else
            op_redeem();
    }

    void op_create_object() {
        ObjectType type = ObjectType(pick(1, kTypeSpan - 1));
        size_t live = 0;
        for (auto& [raw, o] : m_model.objects)
            live += o.live;
        void* ptr = &g_backing[pick(0, uint32_t(g_backing.size() - 1))];
        auto r = m_sys.create_object(type, ptr);
        expect_error(r, live == MaxObjects ? Error::Full : Error::None, "create_object");
        if (!r.ok())
            return;
        // A fresh id never equals any id issued before (generation makes reuse distinct).
        ASSERT_EQ(m_model.objects.count(r->raw()), 0u) << "reissued object id";
        m_model.objects[r->raw()] = MObj { type, true, ptr };
        ++successes[0];
    }
    void op_destroy_object() {
        uint64_t obj = random_object();
        bool live = m_model.obj_live(obj);
        expect_error(m_sys.destroy_object(ObjectId::from_raw(obj)), live ? Error::None : Error::BadHandle, "destroy");
        if (live) {
            m_model.objects[obj].live = false;
            ++successes[1];
        }
    }
    void op_create_table() {
        size_t live = size_t(std::count(m_model.table_live.begin(), m_model.table_live.end(), true));
        auto r = m_sys.create_table();
        expect_error(r, live == MaxTables ? Error::Full : Error::None, "create_table");
        if (!r.ok())
            return;
        uint16_t id = r.value()->id();
        ASSERT_LT(id, MaxTables);
        ASSERT_FALSE(m_model.table_live[id]);
        m_tables[id] = r.value();
        m_model.table_live[id] = true;
        ++successes[2];
    }
    void op_destroy_table() {
        int t = random_table();
        if (t < 0)
            return;
        auto r = m_sys.destroy_table(*m_tables[size_t(t)]);
        if (!table_live(t)) {
            expect_error(r, Error::BadHandle, "destroy_table");
            return;
        }
        size_t removed = 0;
        for (Slot s = 0; s < cap::kCapSlots; ++s) {
            int u = m_model.uid_at(uint16_t(t), s);
            if (u >= 0)
                removed += m_model.erase_subtree(u, true);
        }
        m_model.table_live[size_t(t)] = false;
        expect_error(r, Error::None, "destroy_table");
        ASSERT_EQ(r.value(), removed);
        ++successes[3];
    }
    void op_grant_root() {
        int t = random_table();
        if (t < 0)
            return;
        uint64_t obj = random_object();
        Rights rights = chance(70) && m_model.objects.count(obj)
                            ? cap::default_rights(m_model.objects[obj].type) & random_rights()
                            : random_rights();
        uint64_t badge = random_badge();
        Error want = expect_root(t, obj, rights, false);
        auto r = m_sys.grant_root(*m_tables[size_t(t)], ObjectId::from_raw(obj), rights, badge);
        expect_error(r, want, "grant_root");
        if (want != Error::None)
            return;
        Slot s = m_model.lowest_free(uint16_t(t));
        ASSERT_EQ(r.value(), s);
        m_model.place({ uint16_t(t), s, obj, m_model.objects[obj].type, rights, badge, false, 0, 0, -1 });
        ++successes[4];
    }
    void op_mint() {
        int st = random_table(), dt = random_table();
        if (st < 0 || dt < 0)
            return;
        Slot ss = random_slot(st);
        Rights mask = chance(30) ? kAll : random_rights();
        int src = table_live(st) ? m_model.uid_at(uint16_t(st), ss) : -1;
        uint64_t badge = random_badge();
        if (src >= 0 && chance(30))
            badge = m_model.caps[src].badge; // the same badge again is fine
        Error want = Error::None;
        if (!table_live(st) || !table_live(dt) || src < 0)
            want = Error::BadHandle;
        else if (!m_model.obj_live(m_model.caps[src].obj))
            want = Error::BadHandle;
        else if (m_model.caps[src].token || !cap::has_rights(m_model.caps[src].rights, Rights::Grant))
            want = Error::AccessDenied;
        else if (m_model.caps[src].badge != 0 && badge != 0 && badge != m_model.caps[src].badge)
            want = Error::InvalidArgs;
        else if (m_model.lowest_free(uint16_t(dt)) == cap::kNoSlot)
            want = Error::Full;
        else if (m_model.caps.size() == m_model.node_capacity)
            want = Error::NoMemory;
        auto r = m_sys.mint(*m_tables[size_t(st)], ss, *m_tables[size_t(dt)], mask, badge);
        expect_error(r, want, "mint");
        if (want != Error::None)
            return;
        const MCap p = m_model.caps[src];
        Slot s = m_model.lowest_free(uint16_t(dt));
        ASSERT_EQ(r.value(), s);
        m_model.place({ uint16_t(dt), s, p.obj, p.type, p.rights & mask, p.badge ? p.badge : badge, false, 0, 0, src });
        ++successes[5];
    }
    void op_revoke() {
        int t = random_table();
        if (t < 0)
            return;
        Slot s = random_slot(t);
        int u = table_live(t) ? m_model.uid_at(uint16_t(t), s) : -1;
        Error want = u < 0                                                      ? Error::BadHandle
                     : !cap::has_rights(m_model.caps[u].rights, Rights::Revoke) ? Error::AccessDenied
                                                                                : Error::None;
        auto r = m_sys.revoke(*m_tables[size_t(t)], s);
        expect_error(r, want, "revoke");
        if (want != Error::None)
            return;
        ASSERT_EQ(r.value(), m_model.erase_subtree(u, false));
        check_revoked(uint16_t(t), s);
        ++successes[6];
    }
    void op_remove() {
        int t = random_table();
        if (t < 0)
            return;
        Slot s = random_slot(t);
        int u = table_live(t) ? m_model.uid_at(uint16_t(t), s) : -1;
        auto r = m_sys.remove(*m_tables[size_t(t)], s);
        expect_error(r, u < 0 ? Error::BadHandle : Error::None, "remove");
        if (u < 0)
            return;
        ASSERT_EQ(r.value(), m_model.erase_subtree(u, true));
        ++successes[7];
    }
    void op_transfer() {
        int st = random_table(), dt = random_table();
        if (st < 0 || dt < 0)
            return;
        Slot ss = random_slot(st);
        int u = table_live(st) ? m_model.uid_at(uint16_t(st), ss) : -1;
        Error want = Error::None;
        if (!table_live(dt) || u < 0)
            want = Error::BadHandle;
        else if (m_model.caps[u].token || !cap::has_rights(m_model.caps[u].rights, Rights::Grant))
            want = Error::AccessDenied;
        else if (m_model.lowest_free(uint16_t(dt)) == cap::kNoSlot)
            want = Error::Full;
        auto r = m_sys.transfer(*m_tables[size_t(st)], ss, *m_tables[size_t(dt)]);
        expect_error(r, want, "transfer");
        if (want != Error::None)
            return;
        Slot s = m_model.lowest_free(uint16_t(dt));
        ASSERT_EQ(r.value(), s);
        m_model.at.erase({ uint16_t(st), ss });
        m_model.caps[u].table = uint16_t(dt);
        m_model.caps[u].slot = s;
        m_model.at[{ uint16_t(dt), s }] = u;
        ++successes[8];
    }
    void op_lookup() {
        int t = random_table();
        if (t < 0)
            return;
        Slot s = random_slot(t);
        int u = table_live(t) ? m_model.uid_at(uint16_t(t), s) : -1;
        auto draw_type = [&] {
            uint32_t drawn = pick(0, kTypeSpan);
            return ObjectType(drawn == kTypeSpan ? cap::kObjectTypeCount : drawn);
        };
        ObjectType type = u >= 0 && chance(80) ? m_model.caps[u].type : draw_type();
        Rights need = u >= 0 && chance(60) ? m_model.caps[u].rights & random_rights() : random_rights();
        Error want = Error::None;
        if (u < 0 || !m_model.obj_live(m_model.caps[u].obj))
            want = Error::BadHandle;
        else if (m_model.caps[u].token)
            want = Error::AccessDenied;
        else if (m_model.caps[u].type != type)
            want = Error::WrongType;
        else if (!cap::has_rights(m_model.caps[u].rights, need))
            want = Error::AccessDenied;
        auto r = m_sys.lookup(*m_tables[size_t(t)], s, type, need);
        expect_error(r, want, "lookup");
        if (want != Error::None)
            return;
        const MCap& c = m_model.caps[u];
        ASSERT_EQ(r->ptr, m_model.objects[c.obj].ptr);
        ASSERT_EQ(r->object.raw(), c.obj);
        ASSERT_EQ(r->rights, c.rights);
        ASSERT_EQ(r->badge, c.badge);
        ++successes[9];
    }
    void op_mint_token() {
        int t = random_table();
        if (t < 0)
            return;
        uint64_t obj = random_object();
        Rights rights = chance(80) && m_model.objects.count(obj)
                            ? cap::default_rights(m_model.objects[obj].type) & ~cap::rights::kManage & random_rights()
                            : random_rights();
        uint64_t expires = m_now + pick(0, 3000);
        uint64_t binding = pick(1, 3);
        uint64_t badge = random_badge();
        Error want = expect_root(t, obj, rights, true);
        auto r = m_sys.mint_token(*m_tables[size_t(t)], ObjectId::from_raw(obj), rights, badge, expires, binding);
        expect_error(r, want, "mint_token");
        if (want != Error::None)
            return;
        Slot s = m_model.lowest_free(uint16_t(t));
        ASSERT_EQ(r.value(), s);
        m_model.place({ uint16_t(t), s, obj, m_model.objects[obj].type, rights, badge, true, expires, binding, -1 });
        ++successes[10];
    }
    void op_redeem() {
        int t = random_table();
        if (t < 0)
            return;
        // Aim at tokens most of the time.
        Slot s = random_slot(t);
        for (auto& [uid, c] : m_model.caps)
            if (c.token && c.table == t && chance(50)) {
                s = c.slot;
                break;
            }
        int u = table_live(t) ? m_model.uid_at(uint16_t(t), s) : -1;
        uint64_t binding = u >= 0 && chance(75) ? m_model.caps[u].binding : pick(0, 3);
        Error want = Error::None;
        bool consumed = false;
        if (u < 0)
            want = Error::BadHandle;
        else if (!m_model.caps[u].token)
            want = Error::InvalidArgs;
        else {
            consumed = true;
            const MCap& c = m_model.caps[u];
            if (!m_model.obj_live(c.obj))
                want = Error::BadHandle;
            else if (m_now >= c.expires)
                want = Error::TimedOut;
            else if (c.binding != binding)
                want = Error::AccessDenied;
        }
        auto r = m_sys.redeem(*m_tables[size_t(t)], s, m_now, binding);
        expect_error(r, want, "redeem");
        if (want == Error::None) {
            ASSERT_EQ(r->object.raw(), m_model.caps[u].obj);
            ASSERT_EQ(r->badge, m_model.caps[u].badge);
            ++successes[11];
        }
        if (consumed) {
            m_model.erase(u);
            // Single use: whatever happened, a second redeem of that slot finds nothing.
            ASSERT_EQ(m_sys.redeem(*m_tables[size_t(t)], s, m_now, binding).error(), Error::BadHandle);
        }
    }

    // After revoke(t, s): the capability remains and nothing anywhere descends from it. Checked
    // on the real system alone, by walking every capability's parent chain.
    void check_revoked(uint16_t t, Slot s) {
        auto self = m_sys.slot_info(*m_tables[t], s);
        ASSERT_TRUE(self.ok());
        ASSERT_EQ(self->children, 0u);
        for_each_cap([&](uint16_t, const cap::SlotInfo& info) {
            uint16_t pt = info.parent_table;
            Slot ps = info.parent_slot;
            for (size_t guard = 0; pt != cap::kNoTable; ++guard) {
                ASSERT_LT(guard, MaxNodes);
                ASSERT_FALSE(pt == t && ps == s) << "descendant survived revoke";
                auto p = m_sys.slot_info(*m_tables[pt], ps).value();
                pt = p.parent_table;
                ps = p.parent_slot;
            }
        });
    }

    template <typename F>
    void for_each_cap(F f) {
        std::array<cap::SlotInfo, cap::kCapSlots> buf;
        for (size_t t = 0; t < MaxTables; ++t) {
            if (!m_tables[t] || !m_model.table_live[t])
                continue;
            size_t n = m_sys.list_slots(*m_tables[t], buf);
            for (size_t i = 0; i < n; ++i)
                f(uint16_t(t), buf[i]);
        }
    }

    void check_state() {
        ASSERT_TRUE(m_sys.verify().ok()) << "step " << m_step;
        ASSERT_EQ(m_sys.live_nodes(), m_model.caps.size());
        ASSERT_EQ(m_sys.free_nodes() + m_sys.live_nodes(), MaxNodes);
        size_t seen = 0;
        for_each_cap([&](uint16_t t, const cap::SlotInfo& info) {
            ++seen;
            int u = m_model.uid_at(t, info.slot);
            ASSERT_GE(u, 0) << "step " << m_step << " unexpected cap " << t << ":" << info.slot;
            const MCap& c = m_model.caps[u];
            ASSERT_EQ(info.object.raw(), c.obj);
            ASSERT_EQ(info.type, c.type);
            ASSERT_EQ(info.rights, c.rights);
            ASSERT_EQ(info.badge, c.badge);
            ASSERT_EQ(info.token, c.token);
            ASSERT_EQ(info.object_live, m_model.obj_live(c.obj));
            if (c.parent < 0) {
                ASSERT_EQ(info.parent_table, cap::kNoTable);
            } else {
                const MCap& p = m_model.caps.at(c.parent);
                ASSERT_EQ(info.parent_table, p.table);
                ASSERT_EQ(info.parent_slot, p.slot);
            }
            // Independent of the model: the whole chain up to the root never widens the rights,
            // names one object, and keeps the first badge set.
            uint16_t pt = info.parent_table;
            Slot ps = info.parent_slot;
            Rights below = info.rights;
            uint64_t badge = info.badge;
            for (size_t guard = 0; pt != cap::kNoTable; ++guard) {
                ASSERT_LT(guard, MaxNodes) << "parent chain does not end";
                auto p = m_sys.slot_info(*m_tables[pt], ps);
                ASSERT_TRUE(p.ok());
                ASSERT_TRUE(cap::has_rights(p->rights, below)) << "rights escalation at step " << m_step;
                ASSERT_EQ(p->object, info.object);
                ASSERT_FALSE(p->token);
                if (p->badge != 0) {
                    ASSERT_EQ(p->badge, badge) << "badge changed along derivation";
                }
                below = p->rights;
                badge = p->badge;
                pt = p->parent_table;
                ps = p->parent_slot;
            }
            // Destroyed objects are unreachable through any surviving capability.
            if (!info.object_live) {
                ASSERT_EQ(m_sys.lookup(*m_tables[t], info.slot, info.type, Rights::None).error(), Error::BadHandle);
                ASSERT_EQ(m_sys.object_ptr(info.object), nullptr);
                for (auto& [raw, o] : m_model.objects)
                    if (o.live && ObjectId::from_raw(raw).index == info.object.index)
                        ++dead_after_reuse; // the registry slot already holds a new object
            }
        });
        ASSERT_EQ(seen, m_model.caps.size());
    }

    void teardown_and_check_no_leak() {
        if (::testing::Test::HasFatalFailure())
            return;
        // Half the tables are emptied slot by slot with remove(), the rest destroyed whole.
        for (size_t t = 0; t < MaxTables; ++t) {
            if (!m_model.table_live[t])
                continue;
            if (t % 2 == 0) {
                for (Slot s = 0; s < cap::kCapSlots; ++s) {
                    int u = m_model.uid_at(uint16_t(t), s);
                    if (u < 0)
                        continue;
                    ASSERT_EQ(m_sys.remove(*m_tables[t], s).value(), m_model.erase_subtree(u, true));
                }
                ASSERT_EQ(m_tables[t]->used(), 0u);
            }
        }
        for (size_t t = 0; t < MaxTables; ++t) {
            if (!m_model.table_live[t])
                continue;
            ASSERT_TRUE(m_sys.destroy_table(*m_tables[t]).ok());
            m_model.table_live[t] = false;
        }
        ASSERT_EQ(m_sys.live_tables(), 0u);
        ASSERT_EQ(m_sys.live_nodes(), 0u);
        ASSERT_EQ(m_sys.free_nodes(), MaxNodes);
        ASSERT_TRUE(m_sys.verify().ok());
    }

    std::mt19937 m_rng;
    Model m_model;
    cap::CapabilitySystem<MaxObjects, MaxNodes, MaxTables> m_sys;
    std::array<cap::CapTable*, MaxTables> m_tables;
    uint64_t m_now = 0;
    int m_step = 0;
};

template <size_t O, size_t N, size_t T>
void run_and_report(uint32_t seed, int steps, const char* capacity_outcome) {
    auto h = std::make_unique<Harness<O, N, T>>(seed);
    h->run(steps);
    // Every operation must actually have succeeded sometimes, or the run proves little.
    const char* names[] = {
        "create_object", "destroy_object", "create_table", "destroy_table", "grant_root", "mint",
        "revoke",        "remove",         "transfer",     "lookup",        "mint_token", "redeem"
    };
    for (size_t i = 0; i < 12; ++i)
        EXPECT_GT(h->successes[i], 0u) << names[i] << " never succeeded (seed " << seed << ")";
    // ...and the paths the properties are about must have been exercised.
    for (const char* o : { "redeem:none", "redeem:timed_out", "redeem:access_denied", "redeem:bad_handle",
                           "lookup:bad_handle", "lookup:wrong_type", "lookup:access_denied", "mint:access_denied",
                           "mint:invalid_args", "revoke:access_denied", capacity_outcome })
        EXPECT_GT(h->outcomes[o], 0u) << o << " never happened (seed " << seed << ")";
    EXPECT_GT(h->dead_after_reuse, 0u) << "no dead capability was checked after its registry slot was reused";
    if (getenv("CAP_PROP_STATS")) {
        printf("seed %u max_nodes %zu dead_after_reuse %zu\n", seed, h->max_nodes, h->dead_after_reuse);
        for (auto& [k, v] : h->outcomes)
            printf("  %-28s %zu\n", k.c_str(), v);
    }
}

class CapProperty : public ::testing::TestWithParam<uint32_t> {};

} // namespace

// Small pools: the registry is reused constantly and the node pool runs out (NoMemory).
TEST_P(CapProperty, SmallPoolsAgainstModel) { run_and_report<6, 48, 4>(GetParam(), 4000, "mint:no_memory"); }

// Roomy pools: deeper derivation trees and full tables.
TEST_P(CapProperty, LargePoolsAgainstModel) { run_and_report<16, 400, 3>(GetParam() * 7919u, 4000, "mint:full"); }

INSTANTIATE_TEST_SUITE_P(Seeds, CapProperty, ::testing::Range(1u, 9u));
