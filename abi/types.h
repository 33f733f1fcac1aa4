#pragma once
// The scalar types of the system call ABI (abi/syscalls.def names them in its argument lists) and
// the records exchanged through the calls, gathered so that tasks need no kernel-internal header.
#include <cstdint>

#include "cluster.h"
#include "introspect.h"
#include "net.h"
#include "rights.h"
#include "storage.h"
#include "vector.h"

namespace abi {

// A capability slot in the calling task's table. The kernel reads 32 bits of the register.
using Cap = uint32_t;
// A task's entry point (task_create): kernel text only, since tasks run kernel code.
using TaskEntry = int64_t (*)(void* arg);

// task_limit's flags.
enum TaskFlags : uint64_t {
    // The task's logged store writes (upserts, deletes, creates, drops) return once their record is
    // staged for the disk, not once it is durable: its creator owns the answer to the client and
    // waits for the commit (storage_sync, or storage_barrier and storage_durable) before giving it,
    // so one commit carries the change and the record of it
    // in the audit trail. The MCP bridge sets it on a tool task whose tool changes the store.
    kTaskAckStaged = 1,
};
constexpr uint64_t kTaskFlagsKnown = kTaskAckStaged;

using cluster_abi::ClusterInfo;
using cluster_abi::FedHit;
using cluster_abi::FedQuery;
using cluster_abi::FedResult;
using cluster_abi::FedVectorHead;
using cluster_abi::kFedGet;
using cluster_abi::kFedMaxFilter;
using cluster_abi::kFedMaxGetIds;
using cluster_abi::kFedMaxInput;
using cluster_abi::kFedMaxK;
using cluster_abi::kFedMaxNodes;
using cluster_abi::kFedSearch;
using cluster_abi::kFedStats;
using cluster_abi::kFedVoterLinearizable;
using cluster_abi::kFedVoterLocal;
using cluster_abi::kFedWithProvenance;
using cluster_abi::MemberInfo;
using cluster_abi::PingInfo;

} // namespace abi
