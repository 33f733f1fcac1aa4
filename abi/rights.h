#pragma once
// Capability rights as the system calls take them (cap_mint, cap_grant, token_issue, store_open):
// the bits of lib/cap/rights.h.
#include <cstdint>

#include <cap/rights.h>

namespace abi {

constexpr uint32_t kRead = uint32_t(cap::Rights::Read);
constexpr uint32_t kWrite = uint32_t(cap::Rights::Write);
constexpr uint32_t kExecute = uint32_t(cap::Rights::Execute);
constexpr uint32_t kGrant = uint32_t(cap::Rights::Grant);
constexpr uint32_t kRevoke = uint32_t(cap::Rights::Revoke);
constexpr uint32_t kCreate = uint32_t(cap::Rights::Create); // the vector store's rights
constexpr uint32_t kImport = uint32_t(cap::Rights::Import);
constexpr uint32_t kDrop = uint32_t(cap::Rights::Drop);
constexpr uint32_t kAll = kRead | kWrite | kExecute | kGrant | kRevoke | kCreate | kImport | kDrop;

} // namespace abi
