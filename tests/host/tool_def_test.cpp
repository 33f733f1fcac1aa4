// The rule every kernel tool definition is compiled under (kernel/mcpd/tools/tool_def.h): a tool
// whose token may change the store declares how (its sink class), explicitly. The kernel's own
// table cannot be built on the host; the rule and the constructor are the same code.
#include <type_traits>

#include <gtest/gtest.h>

#include "kernel/mcpd/tools/tool_def.h"

namespace {

using mcpd::Asks;
using mcpd::Effect;
using mcpd::effect_fits;
using mcpd::Flow;
using mcpd::Grant;
using mcpd::SinkClass;
using mcpd::ToolDef;

constexpr uint32_t kRead = uint32_t(cap::Rights::Read);
constexpr uint32_t kWrite = uint32_t(cap::Rights::Write);
constexpr uint32_t kCreate = uint32_t(cap::Rights::Create);
constexpr uint32_t kImport = uint32_t(cap::Rights::Import);
constexpr uint32_t kDrop = uint32_t(cap::Rights::Drop);

bool body(const json::Value&, json::Writer&, mcp::ToolError&, const mcpd::ToolContext&) { return true; }

constexpr mcp::Tool kDropTool = { "drop_it", "Drop",  "Destroys a collection.",    "{}", nullptr,
                                  0,         nullptr, mcp::ToolResult::Structured, 0,    "drop",
                                  "name" };
constexpr mcp::Tool kUntargeted = { "wipe", "Wipe", "Deletes ids somewhere.", "{}", nullptr, 0, nullptr };

// No effect unless one is chosen: neither an Effect nor a definition without one can be made.
static_assert(!std::is_default_constructible_v<Effect>);
static_assert(!std::is_constructible_v<ToolDef, const mcp::Tool&, mcpd::ToolBody, Grant, uint32_t>);

// A token that may change the store needs a mutating effect, whatever its object.
static_assert(!effect_fits(Grant::Store, kDrop, Effect::read_only(), "name"));
static_assert(!effect_fits(Grant::Store, kCreate, Effect::read_only(), "name"));
static_assert(!effect_fits(Grant::Store, kImport, Effect::read_only(), "name"));
static_assert(!effect_fits(Grant::Collection, kRead | kWrite, Effect::read_only(), "collection"));
static_assert(effect_fits(Grant::Store, kDrop, Effect::drops(), "name"));
static_assert(effect_fits(Grant::Collection, kWrite, Effect::deletes_ids(), "collection"));
static_assert(effect_fits(Grant::Collection, kRead | kWrite, Effect::writes_ids(), "collection"));
static_assert(effect_fits(Grant::Store, kImport, Effect::ungated(), "name"));
// ... and one that cannot claims none.
static_assert(!effect_fits(Grant::Collection, kRead, Effect::writes_ids(), "collection"));
static_assert(!effect_fits(Grant::Nothing, kRead, Effect::ungated(), nullptr));
static_assert(effect_fits(Grant::Collection, kRead, Effect::read_only(), "collection"));
// Other objects' write rights change no stored data (a cluster probe).
static_assert(effect_fits(Grant::Cluster, kRead | kWrite, Effect::read_only(), nullptr));
// A sink class needs the argument naming the collection it acts on.
static_assert(!effect_fits(Grant::Collection, kWrite, Effect::deletes_ids(), nullptr));

constinit const ToolDef kDef { kDropTool, body, Grant::Store, kDrop, Effect::drops() };
constinit const ToolDef kFixture {
    ToolDef::Fixture { "fixture" }, body, Grant::Nothing, kRead, Effect::read_only(), Flow::Run, Asks::Yes
};

TEST(ToolDef, CarriesItsDeclaration) {
    EXPECT_EQ(kDef.descriptor, &kDropTool);
    EXPECT_STREQ(kDef.name, "drop_it");
    EXPECT_EQ(kDef.grant, Grant::Store);
    EXPECT_EQ(kDef.rights, kDrop);
    EXPECT_TRUE(kDef.effect.mutates());
    EXPECT_EQ(kDef.effect.sink(), SinkClass::Drop);
    EXPECT_EQ(kDef.flow, Flow::Run);
    EXPECT_FALSE(kDef.asks);
}

TEST(ToolDef, FixturesTakeTheirDescriptorByName) {
    EXPECT_EQ(kFixture.descriptor, nullptr);
    EXPECT_STREQ(kFixture.name, "fixture");
    EXPECT_FALSE(kFixture.effect.mutates());
    EXPECT_TRUE(kFixture.asks);
}

TEST(ToolDef, UntargetedDescriptorStillBuildsReadOnly) {
    constexpr ToolDef def { kUntargeted, body, Grant::Collection, kRead, Effect::read_only() };
    EXPECT_EQ(def.effect.sink(), SinkClass::None);
}

} // namespace
