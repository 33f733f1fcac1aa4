#pragma once
// Rights and object types of the capability system (issue 4, "Capabilities and system calls").
// Each object type declares its default rights here, in one list, so adding a type is one line.
#include <cstdint>

namespace cap {

// A rights bitmask. Bits 5..7 are the vector store's; 8..31 are free.
enum class Rights : uint32_t {
    None = 0,
    Read = 1u << 0,
    Write = 1u << 1,
    Execute = 1u << 2,
    Grant = 1u << 3,  // may mint (derive) and transfer this capability
    Revoke = 1u << 4, // may remove every capability derived from this one
    // The vector store's own rights, so a token for one store operation grants no other: a
    // collection_create call cannot drop a collection.
    Create = 1u << 5, // make a named collection
    Import = 1u << 6, // make one from a snapshot
    Drop = 1u << 7,   // destroy one
};

constexpr Rights operator|(Rights a, Rights b) { return Rights(uint32_t(a) | uint32_t(b)); }
constexpr Rights operator&(Rights a, Rights b) { return Rights(uint32_t(a) & uint32_t(b)); }
constexpr Rights operator~(Rights a) { return Rights(~uint32_t(a)); }
constexpr Rights& operator|=(Rights& a, Rights b) { return a = a | b; }
constexpr Rights& operator&=(Rights& a, Rights b) { return a = a & b; }

// The name of each defined right, by bit number (what introspection prints).
constexpr const char* kRightNames[] = { "read", "write", "execute", "grant", "revoke", "create", "import", "drop" };
constexpr uint32_t kRightCount = sizeof kRightNames / sizeof kRightNames[0];

// True when every bit of `needed` is present in `held`.
constexpr bool has_rights(Rights held, Rights needed) { return (held & needed) == needed; }

namespace rights {
constexpr Rights kRW = Rights::Read | Rights::Write;
constexpr Rights kManage = Rights::Grant | Rights::Revoke;
constexpr Rights kAllDefined = kRW | Rights::Execute | kManage; // the rights every type may use
constexpr Rights kStoreOps = Rights::Create | Rights::Import | Rights::Drop;
} // namespace rights

// X(name, default rights). Append new types at the end: the numeric values are ABI (syscalls,
// introspection records).
// NOTE: ExecToken objects stand for "an executable tool"; single-use tokens (see capability.h)
// may name an object of any type, but the MCP layer registers its tools as ExecToken objects.
#define BASALT_CAP_OBJECT_TYPES(X) \
    X(None, Rights::None) \
    X(Task, rights::kRW | Rights::Execute | rights::kManage) \
    X(Region, rights::kRW | Rights::Execute | rights::kManage) \
    X(Queue, rights::kRW | rights::kManage) \
    X(Timer, rights::kRW | rights::kManage) \
    X(Device, rights::kRW | rights::kManage) \
    X(ExecToken, Rights::Read | Rights::Execute | rights::kManage) \
    X(Introspection, Rights::Read | rights::kManage) \
    X(AuditLog, rights::kRW | rights::kManage) \
    X(VectorCollection, rights::kRW | rights::kManage) \
    X(NetEndpoint, rights::kRW | rights::kManage) \
    X(Semaphore, rights::kRW | rights::kManage) \
    X(Mutex, rights::kRW | rights::kManage) \
    X(Event, rights::kRW | rights::kManage) \
    X(Factory, Rights::Write | rights::kManage) \
    X(VectorService, Rights::Write | rights::kManage) \
    X(VectorStore, rights::kRW | rights::kStoreOps | rights::kManage) \
    X(NetStack, Rights::Write | rights::kManage) \
    X(Datagram, rights::kRW | rights::kManage) \
    X(Cluster, rights::kRW | rights::kManage) \
    X(Disk, rights::kRW | rights::kManage) \
    X(RaftLog, rights::kRW | rights::kManage)

enum class ObjectType : uint8_t {
#define BASALT_CAP_ENUM(name, rights) name,
    BASALT_CAP_OBJECT_TYPES(BASALT_CAP_ENUM)
#undef BASALT_CAP_ENUM
        Count_,
};

constexpr uint32_t kObjectTypeCount = uint32_t(ObjectType::Count_);

constexpr bool is_valid_type(ObjectType t) { return t != ObjectType::None && uint32_t(t) < kObjectTypeCount; }

// The rights a freshly created object's original capability may carry (an upper bound for
// grant_root and mint_token).
constexpr Rights default_rights(ObjectType t) {
    switch (t) {
#define BASALT_CAP_RIGHTS(name, rights) \
    case ObjectType::name: return rights;
        BASALT_CAP_OBJECT_TYPES(BASALT_CAP_RIGHTS)
#undef BASALT_CAP_RIGHTS
    case ObjectType::Count_: break;
    }
    return Rights::None;
}

constexpr const char* type_name(ObjectType t) {
    switch (t) {
#define BASALT_CAP_NAME(name, rights) \
    case ObjectType::name: return #name;
        BASALT_CAP_OBJECT_TYPES(BASALT_CAP_NAME)
#undef BASALT_CAP_NAME
    case ObjectType::Count_: break;
    }
    return "?";
}

static_assert(default_rights(ObjectType::None) == Rights::None);
static_assert(has_rights(default_rights(ObjectType::Task), Rights::Grant | Rights::Revoke));

} // namespace cap
