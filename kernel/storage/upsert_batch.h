#pragma once
// Recovery's upserts, gathered: consecutive upsert records of one collection (same dimension and
// provenance) go to the store as one vec_insert, not one call per record. The log records one
// call's chunk each (up to 64 vectors, often one); the index work is the same either way, the
// calls, worker hand-offs and wake-ups around it are not. Anything else that changes the store
// (a create, a drop, a delete, another collection) is applied only after the batch before it is
// flushed, so the order of changes per collection is the log's.
//
// A vector the batch fails to store fails its record, and the batch goes on with the next record,
// exactly as replaying the records one by one would: the vectors of the failed record after the
// failure are not stored, those before it and every later record's are.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <storage/records.h>

namespace storaged {

class UpsertBatch {
public:
    // A batch's vectors: enough that the calls around them cost nothing next to the inserts, few
    // enough that kernel://status and the calls waiting for the store see recovery move (about a
    // second of inserts of 100 floats under TCG).
    static constexpr uint32_t kMaxVectors = 256;
    static constexpr uint32_t kMaxFloats = 64 * 1024;    // 256 KiB, as much as one record holds
    static constexpr uint32_t kMaxRecords = kMaxVectors; // a record has a vector at least

    // Called for each record flush() settles: `stored` false when the record failed (`error`).
    using Settle = void (*)(void* ctx, uint64_t seq, bool stored, int64_t error);

    bool empty() const { return m_records == 0; }
    // Whether `rec` of collection `name` can join the batch as it is (false: flush() first; a
    // record that does not fit an empty batch is applied on its own).
    bool accepts(std::string_view name, const storage::UpsertRecord& rec) const;
    // Whether `rec` fits an empty batch at all.
    static bool fits(const storage::UpsertRecord& rec);
    // Copies the record in (the log's buffer is reused for the next commit); `slot` is the
    // collection's, kept open by the caller until flush().
    void add(uint32_t slot, std::string_view name, uint64_t seq, const storage::UpsertRecord& rec);
    // Inserts everything gathered, settling each record in log order; the batch is empty after.
    void flush(Settle settle, void* ctx);

private:
    uint32_t m_slot = 0;
    uint32_t m_dim = 0;
    uint64_t m_provenance = 0;
    uint8_t m_name_len = 0;
    char m_name[storage::kRecordNameMax] = {};
    uint32_t m_records = 0;
    uint32_t m_vectors = 0;
    uint64_t m_seq[kMaxRecords] = {};
    uint32_t m_end[kMaxRecords] = {}; // each record's vectors end here (exclusive)
    uint64_t m_ids[kMaxVectors] = {};
    alignas(16) float m_floats[kMaxFloats] = {};
};

} // namespace storaged
