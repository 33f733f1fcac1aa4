#pragma once
// The kernel's audit log (trail.h beside it is the MCP bridges' durable trail, a different
// thing): every capability decision a system call makes that ends in refusal, and every
// execution-token redemption, as fixed records in a ring in kernel memory (readable with
// audit_read through an AuditLog capability). It lives as long as the boot.
#include <cstdint>

#include <abi/introspect.h>

namespace audit {

// The record layout is shared with tasks (audit_read): abi/introspect.h.
using Outcome = abi::AuditOutcome;
using Record = abi::AuditRecord;

void record(uint32_t syscall, uint32_t slot, uint32_t object_type, uint32_t rights, Outcome outcome, int32_t error);
bool read(uint64_t seq, Record& out);
uint64_t next_seq();
uint64_t oldest_seq(); // records before it were overwritten

} // namespace audit
