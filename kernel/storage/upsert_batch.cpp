#include "upsert_batch.h"

#include <abi/sys.h>

#include <cstring>

namespace storaged {

bool UpsertBatch::fits(const storage::UpsertRecord& rec) {
    return rec.dim > 0 && rec.count > 0 && rec.count <= kMaxVectors && uint64_t(rec.count) * rec.dim <= kMaxFloats;
}

bool UpsertBatch::accepts(std::string_view name, const storage::UpsertRecord& rec) const {
    if (m_records == 0)
        return fits(rec);
    return m_records < kMaxRecords && std::string_view(m_name, m_name_len) == name && rec.dim == m_dim &&
           rec.provenance == m_provenance && rec.count <= kMaxVectors - m_vectors &&
           uint64_t(m_vectors + rec.count) * m_dim <= kMaxFloats;
}

void UpsertBatch::add(uint32_t slot, std::string_view name, uint64_t seq, const storage::UpsertRecord& rec) {
    if (m_records == 0) {
        m_slot = slot;
        m_dim = rec.dim;
        m_provenance = rec.provenance;
        m_name_len = static_cast<uint8_t>(name.size() < sizeof m_name ? name.size() : sizeof m_name);
        std::memcpy(m_name, name.data(), m_name_len);
    }
    std::memcpy(m_ids + m_vectors, rec.ids, size_t(rec.count) * sizeof(uint64_t));
    std::memcpy(m_floats + size_t(m_vectors) * m_dim, rec.vectors, size_t(rec.count) * m_dim * sizeof(float));
    m_vectors += rec.count;
    m_seq[m_records] = seq;
    m_end[m_records] = m_vectors;
    ++m_records;
}

void UpsertBatch::flush(Settle settle, void* ctx) {
    // One call for the whole batch; after a failure, one more for what follows the failed record.
    // Each round settles at least one record: at most m_records rounds.
    uint32_t record = 0, from = 0;
    while (record < m_records) {
        const uint32_t count = m_vectors - from;
        int64_t r = sys::vec_insert(m_slot, m_ids + from, m_floats + size_t(from) * m_dim, count, m_provenance);
        const uint32_t stored = r < 0 ? 0 : static_cast<uint32_t>(r) < count ? static_cast<uint32_t>(r) : count;
        // Records wholly stored are done; the one the failure fell in failed (the call's error when
        // nothing went in, else Full: the worker reports a count then, as for one short record).
        while (record < m_records && m_end[record] <= from + stored)
            settle(ctx, m_seq[record++], true, 0);
        if (record == m_records)
            break;
        settle(ctx, m_seq[record], false, r < 0 ? r : -static_cast<int64_t>(ktl::Error::Full));
        from = m_end[record++];
    }
    m_records = 0;
    m_vectors = 0;
}

} // namespace storaged
