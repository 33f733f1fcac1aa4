// The documents of a document collection (lib/text/doc_table.h; issue 37): ids to slots, texts and
// metadata in one arena, compacted when needed, checked against a map through random changes.
#include <text/doc_table.h>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

struct Fixture {
    explicit Fixture(uint32_t docs, uint64_t bytes) {
        text::DocParams p;
        p.max_docs = docs;
        p.arena_bytes = bytes;
        memory.resize(text::DocTable::memory_needed(p));
        auto made = text::DocTable::create(p, memory);
        EXPECT_TRUE(made.ok());
        table = std::move(*made);
    }
    std::vector<std::byte> memory;
    text::DocTable table;
};

TEST(TextDocTable, StoresReplacesAndRemoves) {
    Fixture f(4, 1024);
    bool replaced = true;
    auto a = f.table.upsert("fact-1", "Paris is the capital of France.", R"({"topic":"geo"})", replaced);
    ASSERT_TRUE(a.ok());
    EXPECT_FALSE(replaced);
    EXPECT_EQ(f.table.find("fact-1"), *a);
    auto d = f.table.get(*a);
    EXPECT_EQ(d.id, "fact-1");
    EXPECT_EQ(d.text, "Paris is the capital of France.");
    EXPECT_EQ(d.metadata, R"({"topic":"geo"})");
    auto again = f.table.upsert("fact-1", "Paris is in France.", "", replaced);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(replaced);
    EXPECT_EQ(*again, *a) << "a replaced document keeps its slot";
    EXPECT_EQ(f.table.get(*a).text, "Paris is in France.");
    EXPECT_EQ(f.table.count(), 1u);
    EXPECT_GT(f.table.bytes_garbage(), 0u);
    EXPECT_EQ(f.table.find("fact-2"), text::DocTable::kNone);
    EXPECT_EQ(f.table.remove("fact-2").error(), ktl::Error::NotFound);
    ASSERT_TRUE(f.table.remove("fact-1").ok());
    EXPECT_EQ(f.table.find("fact-1"), text::DocTable::kNone);
    EXPECT_EQ(f.table.count(), 0u);
    EXPECT_TRUE(f.table.get(*a).id.empty());
}

TEST(TextDocTable, RefusesWhatDoesNotFitAndChangesNothing) {
    Fixture f(2, 64);
    bool replaced = false;
    EXPECT_EQ(f.table.upsert("", "x", "", replaced).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(f.table.upsert(std::string(text::kMaxDocId + 1, 'i'), "x", "", replaced).error(),
              ktl::Error::InvalidArgs);
    EXPECT_EQ(f.table.upsert("a", std::string(text::kMaxDocText + 1, 't'), "", replaced).error(),
              ktl::Error::InvalidArgs);
    ASSERT_TRUE(f.table.upsert("a", std::string(30, 'a'), "", replaced).ok());
    ASSERT_TRUE(f.table.upsert("b", std::string(30, 'b'), "", replaced).ok());
    EXPECT_EQ(f.table.upsert("c", "c", "", replaced).error(), ktl::Error::Full) << "no free slot";
    EXPECT_EQ(f.table.upsert("a", std::string(40, 'A'), "", replaced).error(), ktl::Error::Full) << "no room";
    EXPECT_EQ(f.table.get(f.table.find("a")).text, std::string(30, 'a')) << "unchanged";
    // Replacing with as much fits: the old bytes go (a compaction).
    ASSERT_TRUE(f.table.upsert("a", std::string(31, 'A'), "", replaced).ok());
    EXPECT_EQ(f.table.compactions(), 1u);
    EXPECT_EQ(f.table.get(f.table.find("a")).text, std::string(31, 'A'));
    EXPECT_EQ(f.table.get(f.table.find("b")).text, std::string(30, 'b'));
}

TEST(TextDocTable, AgreesWithAMapThroughRandomChanges) {
    std::mt19937 rng(37);
    Fixture f(64, 8192);
    std::map<std::string, std::pair<std::string, std::string>> want;
    for (int round = 0; round < 20000; ++round) {
        const std::string id = "doc-" + std::to_string(rng() % 96);
        const int op = int(rng() % 10);
        if (op < 3) {
            const auto r = f.table.remove(id);
            EXPECT_EQ(r.ok(), want.erase(id) == 1) << round;
        } else {
            const std::string text(rng() % 200, char('a' + rng() % 26));
            const std::string meta = rng() % 2 ? "{\"n\":" + std::to_string(rng() % 1000) + "}" : "";
            const auto check = f.table.check(id, text, meta);
            bool replaced = false;
            const auto r = f.table.upsert(id, text, meta, replaced);
            EXPECT_EQ(check.ok(), r.ok()) << "check() says what upsert() does, round " << round;
            if (r.ok()) {
                EXPECT_EQ(replaced, want.count(id) == 1) << round;
                want[id] = { text, meta };
            }
        }
        if (round % 97 == 0 || round == 19999) {
            ASSERT_EQ(f.table.count(), want.size()) << round;
            uint64_t live = 0;
            for (const auto& [k, v] : want) {
                const uint32_t s = f.table.find(k);
                ASSERT_NE(s, text::DocTable::kNone) << k << " round " << round;
                const auto d = f.table.get(s);
                ASSERT_EQ(d.id, k);
                ASSERT_EQ(d.text, v.first) << k << " round " << round;
                ASSERT_EQ(d.metadata, v.second);
                live += k.size() + v.first.size() + v.second.size();
            }
            EXPECT_EQ(f.table.bytes_live(), live);
        }
    }
    EXPECT_GT(f.table.compactions(), 10u) << "the arena was compacted along the way";
}

} // namespace
