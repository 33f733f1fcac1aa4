#pragma once
// Build identity, filled in by CMake (resources carry source_commit).
constexpr const char* kVersion = BASALT_VERSION;
constexpr const char* kSourceCommit = BASALT_SOURCE_COMMIT;
