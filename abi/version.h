#pragma once
// Build identity: the version from CMake, the commit from the header generated at each build
// (resources carry source_commit). A constant of the image, the same for the kernel and every task
// linked into it: tasks read it here, not through a system call.
#include <source_commit.h>

constexpr const char* kVersion = BASALT_VERSION;
constexpr const char* kSourceCommit = BASALT_SOURCE_COMMIT;
