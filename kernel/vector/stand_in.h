#pragma once
// A replicated collection other nodes hold, as this node's callers change it (issue 35;
// docs/replication.md, "Changes from outside a group"). A voter of group 0 that the collection's
// placement does not name holds no copy; for a caller that only writes (vector_upsert,
// vector_delete) the store opens a stand-in of the collection's name and dimension instead (group
// 0's directory says both). Its upserts and deletes go to the replication desk as any replicated
// collection's do, and the cluster task carries them to the collection's voters and answers the
// caller when they tell it the outcome; whatever reads it answers Elsewhere (a read goes to a
// voter). Stand-ins are kept, one per name, and reused by later calls; when the table is full the
// one used longest ago goes (its capabilities die first: a call holding one ends BadHandle).
// IRQs masked by the caller (the store's system calls).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ktl/result.h>

namespace vector::stand_in {

constexpr size_t kMaxStandIns = 8;

// The object id of the stand-in of `name` (dimension `dim`, 1..hnsw::kMaxDim), made if needed.
ktl::Result<uint64_t> obtain(std::string_view name, uint32_t dim);

} // namespace vector::stand_in
