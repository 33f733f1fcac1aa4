#pragma once
// The cluster calls' records are part of the system call ABI: abi/cluster.h.
#include <abi/cluster.h>
