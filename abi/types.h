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

using cluster_abi::ClusterInfo;
using cluster_abi::MemberInfo;
using cluster_abi::PingInfo;

} // namespace abi
