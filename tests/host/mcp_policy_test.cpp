// MCP policy primitives: role/scope mapping, API-key store (hashed, constant-time, key specs),
// per-principal rate and concurrency limits, error-code names and HTTP statuses.
#include <mcp/policy/call_limiter.h>
#include <mcp/policy/error_code.h>
#include <mcp/policy/key_store.h>
#include <mcp/policy/principal_limits.h>
#include <mcp/policy/roles.h>

#include <gtest/gtest.h>

#include <algorithm>
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
    // A transport that hashed the key already (its session check) hands over the digest.
    const auto good = crypto::Sha256::hash("0123456789abcdef-agent");
    const auto bad = crypto::Sha256::hash("0123456789abcdef-agenT");
    auto by_digest = store->authenticate("0123456789abcdef-agent", &good);
    ASSERT_TRUE(by_digest.ok());
    EXPECT_EQ(*by_digest, *p);
    EXPECT_EQ(store->authenticate("0123456789abcdef-agent", &bad).error(), ktl::Error::NotFound);
    // The secret must not be anywhere in the store's memory.
    const char* secret = "correct-horse-battery-staple";
    auto* raw = reinterpret_cast<const char*>(store.get());
    EXPECT_EQ(std::string(raw, sizeof(KeyStore)).find(secret), std::string::npos);
}

// key_sha256=: the SD card carries the secret's SHA-256, never the secret; the key works the same.
TEST(McpKeyStore, KeysInstalledFromTheirDigest) {
    KeyStore store;
    char hex[65];
    crypto::to_hex(crypto::Sha256::hash("a-secret-only-the-client-has"), hex);
    auto id = store.add_spec_sha256(std::string("admin:pi-owner:") + hex);
    ASSERT_TRUE(id.ok()) << ktl::error_name(id.error());
    auto p = store.authenticate("a-secret-only-the-client-has");
    ASSERT_TRUE(p.ok());
    EXPECT_STREQ((*p)->name, "pi-owner");
    EXPECT_EQ((*p)->role, Role::Admin);
    EXPECT_EQ(store.authenticate(hex).error(), ktl::Error::NotFound) << "the digest itself is not a key";
    crypto::to_hex(crypto::Sha256::hash("another-secret-for-a-reader"), hex);
    ASSERT_TRUE(store.add_spec_sha256(std::string("reader:") + hex).ok());
    EXPECT_STREQ(store.authenticate("another-secret-for-a-reader").value()->name, "reader-2");
    EXPECT_EQ(store.add_spec_sha256("admin:x:abcd").error(), ktl::Error::InvalidArgs) << "64 hex digits";
    std::string bad(64, 'g');
    EXPECT_EQ(store.add_spec_sha256("admin:x:" + bad).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(store.add_spec_sha256(std::string("anonymous:x:") + hex).error(), ktl::Error::InvalidArgs);
    EXPECT_EQ(store.add_spec_sha256(std::string("admin:y:") + hex).error(), ktl::Error::Exists) << "same key twice";
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

// Counts the calls a principal gets at one instant (no refill) before the bucket refuses.
uint32_t burst_of(CallLimiter& lim, uint16_t who, Role role, const PrincipalLimits* own = nullptr) {
    uint32_t n = 0;
    for (; n < 5000; ++n) {
        auto d = lim.acquire(who, 1000000000, own, role);
        if (!d.allowed) {
            EXPECT_EQ(d.code, ErrorCode::LimitRateExceeded);
            break;
        }
        lim.release(who);
    }
    return n;
}

// Without `rate=`, each role has its own bucket: admins (the console) far above anonymous
// callers, all finite; a principal's own limit still only tightens its role's.
TEST(McpCallLimiter, EachRoleHasItsOwnBucket) {
    RoleRate top = role_rate(Role::Admin);
    CallLimiter lim(LimitConfig { top.burst, top.per_second, 10, true });
    EXPECT_EQ(burst_of(lim, 1, Role::Anonymous), 50u);
    EXPECT_EQ(burst_of(lim, 2, Role::Reader), 200u);
    EXPECT_EQ(burst_of(lim, 3, Role::Operator), 500u);
    EXPECT_EQ(burst_of(lim, 4, Role::Admin), 1000u);
    EXPECT_GE(role_rate(Role::Admin).burst, 300u) << "a few hundred back-to-back admin calls pass";
    PrincipalLimits own;
    own.burst = 30;
    EXPECT_EQ(burst_of(lim, 5, Role::Admin, &own), 30u) << "tightened below the role";
    own.burst = 5000;
    EXPECT_EQ(burst_of(lim, 6, Role::Reader, &own), 200u) << "never above the role";
    auto refill = for_role(lim.config(), Role::Reader);
    EXPECT_EQ(refill.per_second, 100u);
    // `rate=` (by_role off): one bucket for every role, whatever it is.
    CallLimiter flat(LimitConfig { 7, 1, 10, false });
    EXPECT_EQ(burst_of(flat, 1, Role::Admin), 7u);
    EXPECT_EQ(burst_of(flat, 2, Role::Anonymous), 7u);
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

TEST(McpPrincipalLimits, ParsesSpecs) {
    std::string_view who;
    PrincipalLimits l;
    ASSERT_TRUE(
        parse_limit_spec("ada:time_ms=250,output_bytes=1024,rate=5/2,concurrency=3,memory_bytes=65536,syscalls=40", who,
                         l));
    EXPECT_EQ(l.memory_bytes, 65536u);
    EXPECT_EQ(l.syscalls, 40u);
    EXPECT_EQ(who, "ada");
    EXPECT_EQ(l.time_ms, 250u);
    EXPECT_EQ(l.output_bytes, 1024u);
    EXPECT_EQ(l.burst, 5u);
    EXPECT_EQ(l.per_second, 2u);
    EXPECT_EQ(l.concurrency, 3u);
    PrincipalLimits only;
    ASSERT_TRUE(parse_limits("concurrency=1", only));
    EXPECT_EQ(only.concurrency, 1u);
    EXPECT_EQ(only.time_ms, 0u) << "what is not named keeps the default";

    // Every malformed spec is refused whole, and leaves the output untouched.
    for (const char* bad :
         { "", "ada", ":time_ms=5", "ada:", "ada:time_ms", "ada:time_ms=", "ada:time_ms=0", "ada:time_ms=-1",
           "ada:time_ms=1e3", "ada:time_ms=1234567890", "ada:memory=5", "ada:rate=5", "ada:rate=5/", "ada:rate=/5",
           "ada:rate=0/1", "ada:time_ms=5,", "ada:time_ms=5,,concurrency=1", "ada:TIME_MS=5" }) {
        PrincipalLimits untouched;
        untouched.time_ms = 77;
        EXPECT_FALSE(parse_limit_spec(bad, who, untouched)) << bad;
        EXPECT_EQ(untouched.time_ms, 77u) << bad;
    }
}

TEST(McpPrincipalLimits, OnlyEverTighten) {
    const LimitConfig base { 50, 20, 10 };
    PrincipalLimits own;
    own.burst = 5;
    own.per_second = 100; // looser: ignored
    own.concurrency = 20; // looser: ignored
    LimitConfig eff = tightened(base, own);
    EXPECT_EQ(eff.burst, 5u);
    EXPECT_EQ(eff.per_second, 20u);
    EXPECT_EQ(eff.max_in_flight, 10u);
    const CallLimits call { 10'000'000'000ull, 65536, 8u << 20, 100000 };
    EXPECT_TRUE(loosens(own, base, call));

    own = {};
    own.memory_bytes = 1u << 20;
    own.syscalls = 50;
    EXPECT_EQ(tightened_memory(8u << 20, own), 1u << 20);
    EXPECT_EQ(tightened_memory(4096, own), 4096u);
    EXPECT_EQ(tightened_syscalls(100000, own), 50u);
    EXPECT_EQ(tightened_syscalls(10, own), 10u);
    EXPECT_FALSE(loosens(own, base, call));
    EXPECT_TRUE(loosens(own, base, { 10'000'000'000ull, 65536, 4096, 100000 }));
    EXPECT_TRUE(loosens(own, base, { 10'000'000'000ull, 65536, 8u << 20, 10 }));

    own = {};
    own.time_ms = 300;
    own.output_bytes = 4096;
    EXPECT_EQ(tightened_wall_ns(10'000'000'000ull, own), 300'000'000ull);
    EXPECT_EQ(tightened_wall_ns(100'000'000ull, own), 100'000'000ull) << "the appliance's tighter limit wins";
    EXPECT_EQ(tightened_output(65536, own), 4096u);
    EXPECT_EQ(tightened_output(1024, own), 1024u);
    EXPECT_FALSE(loosens(own, base, call));
    EXPECT_TRUE(loosens(own, base, { 100'000'000ull, 65536, 8u << 20, 100000 }));
    EXPECT_EQ(tightened_wall_ns(7, PrincipalLimits {}), 7u);
    EXPECT_EQ(tightened_output(9, PrincipalLimits {}), 9u);
}

TEST(McpCallLimiter, PrincipalOverridesTighten) {
    CallLimiter lim(LimitConfig { 50, 20, 10 });
    PrincipalLimits own;
    own.burst = 3;
    own.per_second = 1;
    own.concurrency = 2;
    uint64_t t = 1000000000;
    ASSERT_TRUE(lim.acquire(4, t, &own).allowed);
    ASSERT_TRUE(lim.acquire(4, t, &own).allowed);
    auto d = lim.acquire(4, t, &own);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.code, ErrorCode::LimitConcurrencyExceeded) << "two in flight at most";
    lim.release(4);
    lim.release(4);
    ASSERT_TRUE(lim.acquire(4, t, &own).allowed);
    lim.release(4);
    d = lim.acquire(4, t, &own);
    EXPECT_FALSE(d.allowed);
    EXPECT_EQ(d.code, ErrorCode::LimitRateExceeded) << "a bucket of three";
    EXPECT_EQ(d.retry_after_ms, 1000u) << "refilled at one per second";
    EXPECT_TRUE(lim.acquire(4, t + 1000000000, &own).allowed);
    // The same principal without overrides would have had the default bucket of 50.
    for (int i = 0; i < 50; ++i) {
        ASSERT_TRUE(lim.acquire(5, t).allowed) << i;
        lim.release(5);
    }
    // Overrides looser than the configuration change nothing.
    PrincipalLimits loose;
    loose.burst = 1000;
    loose.concurrency = 1000;
    for (int i = 0; i < 10; ++i)
        ASSERT_TRUE(lim.acquire(6, t, &loose).allowed);
    EXPECT_EQ(lim.acquire(6, t, &loose).code, ErrorCode::LimitConcurrencyExceeded);
}

namespace {
int g_depth = 0, g_entries = 0, g_max_depth = 0;
}

TEST(McpCallLimiter, EveryAccessIsInsideTheLock) {
    LimiterLock lock { [] {
                          ++g_entries;
                          g_max_depth = std::max(g_max_depth, ++g_depth);
                      },
                       [] { --g_depth; } };
    CallLimiter lim(LimitConfig { 2, 1, 1 }, lock);
    EXPECT_TRUE(lim.acquire(1, 1).allowed);
    EXPECT_FALSE(lim.acquire(1, 1).allowed);
    EXPECT_EQ(lim.in_flight(1), 1u);
    lim.release(1);
    EXPECT_EQ(lim.acquire(CallLimiter::kMaxPrincipals, 1).code, ErrorCode::InternalError);
    EXPECT_EQ(g_depth, 0) << "balanced";
    EXPECT_EQ(g_max_depth, 1) << "never nested";
    EXPECT_EQ(g_entries, 4) << "acquire x2, in_flight, release (a refused id touches no state)";
}

TEST(McpPrincipalLimits, ScopesOnlyNarrow) {
    PrincipalLimits l;
    ASSERT_TRUE(parse_limits("scopes=kernel:read+audit:read", l));
    EXPECT_TRUE(l.has_scopes);
    EXPECT_EQ(l.scopes, uint32_t(kKernelRead | kAuditRead));
    PrincipalLimits none;
    ASSERT_TRUE(parse_limits("scopes=none,concurrency=2", none));
    EXPECT_TRUE(none.has_scopes);
    EXPECT_EQ(none.scopes, 0u);
    for (const char* bad :
         { "scopes=", "scopes=kernel:read+", "scopes=+kernel:read", "scopes=root", "scopes=kernel:read,vector:read" }) {
        PrincipalLimits x;
        EXPECT_FALSE(parse_limits(bad, x)) << bad;
    }

    KeyStore keys;
    ASSERT_TRUE(keys.add_spec("admin:root:0123456789abcdef-admin"));
    ASSERT_TRUE(keys.add_spec("reader:ada:0123456789abcdef-reader"));
    ASSERT_TRUE(keys.set_limits("root", l)); // an admin narrowed to two scopes
    ASSERT_TRUE(keys.set_limits("ada", l));  // audit:read is beyond a reader: not granted
    EXPECT_EQ((*keys.authenticate("0123456789abcdef-admin"))->scopes, uint32_t(kKernelRead | kAuditRead));
    EXPECT_EQ((*keys.authenticate("0123456789abcdef-reader"))->scopes, uint32_t(kKernelRead));
    ASSERT_TRUE(keys.set_limits("ada", none));
    EXPECT_EQ((*keys.authenticate("0123456789abcdef-reader"))->scopes, 0u);
}

TEST(McpKeyStore, CarriesLimitOverrides) {
    KeyStore keys;
    ASSERT_TRUE(keys.add_spec("reader:ada:0123456789abcdef"));
    PrincipalLimits l;
    l.time_ms = 100;
    EXPECT_TRUE(keys.set_limits("ada", l));
    EXPECT_FALSE(keys.set_limits("bob", l));
    auto p = keys.authenticate("0123456789abcdef");
    ASSERT_TRUE(p);
    EXPECT_EQ((*p)->limits.time_ms, 100u);
}

TEST(McpErrorCodes, NamesAndStatuses) {
    EXPECT_STREQ(error_code_name(ErrorCode::AuthMissingApiKey), "auth_missing_api_key");
    EXPECT_STREQ(error_code_name(ErrorCode::ValidationUnknownTool), "validation_unknown_tool");
    EXPECT_STREQ(error_code_name(ErrorCode::LimitConcurrencyExceeded), "limit_concurrency_exceeded");
    EXPECT_EQ(http_status(ErrorCode::AuthMissingApiKey), 401);
    EXPECT_EQ(http_status(ErrorCode::AuthInsufficientRole), 403);
    EXPECT_EQ(http_status(ErrorCode::LimitRateExceeded), 429);
    EXPECT_EQ(http_status(ErrorCode::ValidationFailed), 200);
    // A retryable failure of an admitted call: in the tool result, like the other store codes.
    EXPECT_STREQ(error_code_name(ErrorCode::Unavailable), "unavailable");
    EXPECT_EQ(http_status(ErrorCode::Unavailable), 200);
    ErrorCode parsed = ErrorCode::AuthMissingApiKey;
    EXPECT_TRUE(parse_error_code("unavailable", parsed));
    EXPECT_EQ(parsed, ErrorCode::Unavailable);
    EXPECT_TRUE(parse_error_code("internal_error", parsed));
    EXPECT_EQ(parsed, ErrorCode::InternalError);
}
