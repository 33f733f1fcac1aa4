#pragma once
// Build identity: the version from CMake, the commit from the header generated at each build
// (resources carry source_commit).
#include <source_commit.h>

constexpr const char* kVersion = BASALT_VERSION;
constexpr const char* kSourceCommit = BASALT_SOURCE_COMMIT;
