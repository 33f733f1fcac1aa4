#pragma once
// The task-side system calls live in the ABI folder: abi/sys.h.
#include <abi/sys.h>
