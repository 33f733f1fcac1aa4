#pragma once
// Flattened device tree on-disk format constants (Devicetree Specification v0.4, chapter 5).
// Internal to lib/dtb: users go through dtb::Blob.
#include <cstdint>

namespace dtb {

// 5.4.1 Lexical structure: structure-block tokens, big-endian 32-bit words.
constexpr uint32_t kTokenBeginNode = 0x1;
constexpr uint32_t kTokenEndNode = 0x2;
constexpr uint32_t kTokenProp = 0x3;
constexpr uint32_t kTokenNop = 0x4;
constexpr uint32_t kTokenEnd = 0x9;

// 5.2 Header: byte offsets of the fields in struct fdt_header.
constexpr uint32_t kHeaderMagic = 0;
constexpr uint32_t kHeaderTotalSize = 4;
constexpr uint32_t kHeaderOffStruct = 8;
constexpr uint32_t kHeaderOffStrings = 12;
constexpr uint32_t kHeaderOffMemRsv = 16;
constexpr uint32_t kHeaderVersion = 20;
constexpr uint32_t kHeaderLastCompVersion = 24;
constexpr uint32_t kHeaderSizeStrings = 32;
constexpr uint32_t kHeaderSizeStruct = 36;

// 5.3 Memory reservation block: {uint64 address, uint64 size} entries, 8-byte aligned.
constexpr uint32_t kReserveEntrySize = 16;

} // namespace dtb
