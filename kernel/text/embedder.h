#pragma once
// The embedder's model in the kernel (issue 37; docs/documents.md): the file lib/text/
// embed_model.h reads, where the board put it (QEMU: run.sh --model loads it into RAM and names
// it with model=; platform.cpp maps it read-only and keeps it from the page allocator). Opened
// once at boot; an appliance without one, or with one it refuses, runs all the same and says
// which (kernel://status: embedder).
#include <cstdint>

#include <text/embed_model.h>

namespace embedder {

enum class State : uint8_t {
    Absent,      // no model= given
    Loaded,      // opened and checked
    Misplaced,   // model= names memory that is not free RAM (platform.cpp refused it)
    Corrupt,     // its checksum or structure does not add up
    Unsupported, // another file, or a version this kernel does not read
};

// After the memory map is installed.
void init();
State state();
const char* state_name(State s);
// The model when Loaded, else nullptr.
const text::EmbedModel* model();
uint64_t bytes(); // the file's size as model= gave it (0: none)
uint32_t dim();   // the model's dimension (0: none)

} // namespace embedder
