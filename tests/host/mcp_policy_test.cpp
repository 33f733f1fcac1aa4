// MCP policy primitives: role/scope mapping, API-key store (hashed, constant-time, key specs),
// per-principal rate and concurrency limits, error-code names and HTTP statuses.
#include <mcp/policy/call_limiter.h>
#include <mcp/policy/error_code.h>
#include <mcp/policy/key_store.h>
#include <mcp/policy/roles.h>

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

using namespace mcp;

TEST(McpRoles, ScopesFollowTheContract) {
    EXPECT_EQ(scopes_of(Role::Admin), uint32_t(kAllScopes));
    EXPECT_EQ(scopes_of(Role::Operator), uint32_t(kKernelRead | kVectorRead | kVectorWrite));
    EXPECT_EQ(scopes_of(Role::Reader), uint32_t(kKernelRead | kVectorRead));
    EXPECT_EQ(scopes_of(Role::Anonymous), 0u);
    EXPECT_FALSE(scopes_of(Role::Operator) & kAuditRead);
    EXPECT_FALSE(scopes_of(Role::Operator) & kVectorAdmin);
    char buf[128];
    format_scopes(scopes_of(Role::Reader), buf, sizeof buf);
    EXPECT_STREQ(buf, "kernel:read vector:read");
    EXPECT_EQ(parse_role("operator"), Role::Operator);
    EXPECT_FALSE(parse_role("root"));
    EXPECT_EQ(parse_scope("audit:read"), kAuditRead);
    EXPECT_FALSE(parse_scope("audit:write"));
}

TEST(McpKeyStore, AuthenticatesByKeyAndStoresOnlyDigests) {
    auto store = std::make_unique<KeyStore>();
    auto admin = store->add("owner", Role::Admin, "correct-horse-battery-staple");
    auto agent = store->add("indexer", Role::Operator, "0123456789abcdef-agent");
    ASSERT_TRUE(admin.ok() && agent.ok());
    auto p = store->authenticate("0123456789abcdef-agent");
    ASSERT_TRUE(p.ok());
    EXPECT_STREQ((*p)->name, "indexer");
    EXPECT_EQ((*p)->role, Role::Operator);
    EXPECT_EQ((*p)->scopes, scopes_of(Role::Operator));
    EXPECT_EQ(store->authenticate("0123456789abcdef-agenT").error(), ktl::Error::NotFound);
    EXPECT_EQ(store->authenticate("0123456789abcdef-agen").error(), ktl::Error::NotFound) << "prefix";
    EXPECT_EQ(store->authenticate("").error(), ktl::Error::InvalidArgs);
    // The secret must not be anywhere in the store's memory.
    const char* secret = "correct-horse-battery-staple";
    auto* raw = reinterpret_cast<const char*>(store.get());
    EXPECT_EQ(std::string(raw, sizeof(KeyStore)).find(secret), std::string::npos);
}

TEST(McpKeyStore, RejectsWeakDuplicateAndOverreachingKeys) {
    KeyStore store;
    EXPECT_EQ(store.add("a", Role::Reader, "short").error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(store.add("bad name", Role::Reader, "long-enough-secret-1").error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(store.add("r", Role::Reader, "long-enough-secret-1", kAuditRead).error(), ktl::Error::InvalidArgs)
        << "scopes may only be tightened";
    ASSERT_TRUE(store.add("r", Role::Reader, "long-enough-secret-1", kVectorRead).ok());
    EXPECT_EQ(store.add("s", Role::Admin, "long-enough-secret-1").error(), ktl::Error::Exists) << "same secret";
    EXPECT_EQ(store.add("r", Role::Admin, "long-enough-secret-2").error(), ktl::Error::Exists) << "same principal";
    EXPECT_EQ((*store.authenticate("long-enough-secret-1"))->scopes, uint32_t(kVectorRead));
}

TEST(McpKeyStore, ParsesKeySpecs) {
    KeyStore store;
    auto a = store.add_spec("admin:this-is-the-admin-key");
    ASSERT_TRUE(a.ok());
    EXPECT_STREQ(store.by_id(*a)->name, "admin-1");
    auto b = store.add_spec("reader:dashboard:this-is-a-reader-key");
    ASSERT_TRUE(b.ok());
    EXPECT_STREQ(store.by_id(*b)->name, "dashboard");
    EXPECT_EQ(store.by_id(*b)->role, Role::Reader);
    EXPECT_FALSE(store.add_spec("wizard:some-long-secret-value").ok());
    EXPECT_FALSE(store.add_spec("anonymous:some-long-secret-value").ok());
    EXPECT_FALSE(store.add_spec("no-colon-at-all").ok());
    EXPECT_EQ(store.size(), 2u);
}

TEST(McpKeyStore, FillsUp) {
    KeyStore store;
    for (size_t i = 0; i < KeyStore::kMaxKeys; ++i)
        ASSERT_TRUE(store.add("p" + std::to_string(i), Role::Reader, "secret-number-" + std::to_string(1000 + i)).ok());
    EXPECT_EQ(store.add("extra", Role::Reader, "secret-number-extra").error(), ktl::Error::Full);
    EXPECT_STREQ((*store.authenticate("secret-number-1031"))->name, "p31");
}

TEST(McpCallLimiter, BurstThenRefill) {
    CallLimiter lim(LimitConfig { 5, 10, 100 });
    uint64_t t = 1000000000;
    for (int i = 0; i < 5; ++i) {
        auto d = lim.acquire(1, t);
        ASSERT_TRUE(d.allowed) << i;
        lim.release(1);
    }
    auto d = lim.acquire(1, t);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.code, ErrorCode::LimitRateExceeded);
    EXPECT_EQ(d.retry_after_ms, 100u) << "one call per 100 ms at 10/s";
    EXPECT_TRUE(lim.acquire(2, t).allowed) << "other principals have their own bucket";
    EXPECT_FALSE(lim.acquire(1, t + 99000000).allowed);
    EXPECT_TRUE(lim.acquire(1, t + 100000000).allowed) << "refilled after 100 ms";
}

TEST(McpCallLimiter, ConcurrencyCap) {
    CallLimiter lim(LimitConfig { 100, 100, 10 });
    for (int i = 0; i < 10; ++i)
        ASSERT_TRUE(lim.acquire(3, 1).allowed);
    auto d = lim.acquire(3, 1);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.code, ErrorCode::LimitConcurrencyExceeded);
    EXPECT_EQ(lim.in_flight(3), 10u);
    lim.release(3);
    EXPECT_TRUE(lim.acquire(3, 1).allowed);
    EXPECT_EQ(lim.in_flight(3), 10u);
    EXPECT_EQ(lim.acquire(CallLimiter::kMaxPrincipals, 1).code, ErrorCode::InternalError);
}

TEST(McpErrorCodes, NamesAndStatuses) {
    EXPECT_STREQ(error_code_name(ErrorCode::AuthMissingApiKey), "auth_missing_api_key");
    EXPECT_STREQ(error_code_name(ErrorCode::ValidationUnknownTool), "validation_unknown_tool");
    EXPECT_STREQ(error_code_name(ErrorCode::LimitConcurrencyExceeded), "limit_concurrency_exceeded");
    EXPECT_EQ(http_status(ErrorCode::AuthMissingApiKey), 401);
    EXPECT_EQ(http_status(ErrorCode::AuthInsufficientRole), 403);
    EXPECT_EQ(http_status(ErrorCode::LimitRateExceeded), 429);
    EXPECT_EQ(http_status(ErrorCode::ValidationFailed), 200);
}
