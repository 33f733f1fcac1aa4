#pragma once
// The kernel's audit log (trail.h beside it is the MCP bridges' durable trail, a different
// thing): every capability decision a system call makes that ends in refusal, and every
// execution-token redemption, as fixed records in a ring in kernel memory (readable with
// audit_read through an AuditLog capability). It lives as long as the boot.
#include <cstdint>

namespace audit {

enum class Outcome : uint8_t { Allow = 0, Deny = 1, Error = 2 };

struct Record {
    uint64_t seq;
    uint64_t mono_ns;
    uint32_t task_id;
    uint32_t syscall;      // number from syscalls.def
    uint32_t slot;         // capability slot presented
    uint32_t object_type;  // cap::ObjectType expected
    uint32_t rights;       // rights wanted
    int32_t error;         // ktl::Error, 0 when allowed
    Outcome outcome;
    char task_name[24];
};

void record(uint32_t syscall, uint32_t slot, uint32_t object_type, uint32_t rights, Outcome outcome, int32_t error);
bool read(uint64_t seq, Record& out);
uint64_t next_seq();
uint64_t oldest_seq(); // records before it were overwritten

} // namespace audit
