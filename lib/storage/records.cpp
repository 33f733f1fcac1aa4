#include "records.h"

#include <cstring>

#include <ktl/le_bytes.h>

namespace storage {
namespace {

constexpr auto put32 = ktl::put_le<uint32_t>;
constexpr auto put64 = ktl::put_le<uint64_t>;
constexpr auto get32 = ktl::get_le<uint32_t>;
constexpr auto get64 = ktl::get_le<uint64_t>;

bool name_ok(std::string_view name) { return !name.empty() && name.size() <= kRecordNameMax; }

void put_prefix(std::byte* p, std::string_view name) {
    std::memset(p, 0, kRecordPrefix);
    p[0] = std::byte(name.size());
    std::memcpy(p + 1, name.data(), name.size());
}

} // namespace

size_t upsert_record_bytes(uint32_t dim, uint64_t count) {
    if (dim == 0 || dim > kRecordMaxDim || count > 0xffffffffu)
        return 0;
    const uint64_t per = 8ull + 4ull * dim;
    if (count > (UINT64_MAX / 2 - kUpsertFixed) / per)
        return 0;
    return static_cast<size_t>(kUpsertFixed + per * count);
}

size_t delete_record_bytes(uint64_t count) {
    return count == 0 || count > kMaxDeleteIds ? 0 : static_cast<size_t>(kDeleteFixed + 8 * count);
}

size_t document_record_bytes(size_t body) {
    return body < 8 || body > kMaxDocumentRecord - kRecordPrefix ? 0 : kRecordPrefix + body;
}

ktl::Result<size_t> encode_document(std::span<std::byte> out, std::string_view name, std::span<const std::byte> head,
                                    std::span<const std::byte> body) {
    const size_t bytes = document_record_bytes(head.size() + body.size());
    if (!name_ok(name) || bytes == 0)
        return ktl::Error::InvalidArgs;
    if (out.size() < bytes)
        return ktl::Error::OutOfRange;
    put_prefix(out.data(), name);
    if (!head.empty())
        std::memcpy(out.data() + kRecordPrefix, head.data(), head.size());
    std::byte* at = out.data() + kRecordPrefix + head.size();
    if (body.data() != at) // (a body written in place already stays)
        std::memmove(at, body.data(), body.size());
    return bytes;
}

ktl::Result<size_t> encode_create(std::span<std::byte> out, std::string_view name, const CreateRecord& r) {
    if (!name_ok(name))
        return ktl::Error::InvalidArgs;
    if (out.size() < kCreateRecordBytes)
        return ktl::Error::OutOfRange;
    std::byte* p = out.data();
    put_prefix(p, name);
    const uint32_t fields[7] = { r.dim, r.metric, r.m, r.ef_construction, r.max_elements, r.max_ef, r.flags };
    for (size_t i = 0; i < 7; ++i)
        put32(p + kRecordPrefix + 4 * i, fields[i]);
    return kCreateRecordBytes;
}

ktl::Result<size_t> encode_drop(std::span<std::byte> out, std::string_view name) {
    if (!name_ok(name))
        return ktl::Error::InvalidArgs;
    if (out.size() < kDropRecordBytes)
        return ktl::Error::OutOfRange;
    put_prefix(out.data(), name);
    return kDropRecordBytes;
}

ktl::Result<size_t> encode_delete(std::span<std::byte> out, std::string_view name, const uint64_t* ids, uint32_t count,
                                  const bool* skip) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < count; ++i)
        kept += skip && skip[i] ? 0 : 1;
    const size_t bytes = delete_record_bytes(kept);
    if (!name_ok(name) || bytes == 0 || !ids)
        return ktl::Error::InvalidArgs;
    if (out.size() < bytes)
        return ktl::Error::OutOfRange;
    std::byte* p = out.data();
    put_prefix(p, name);
    put32(p + kRecordPrefix, kept);
    put32(p + kRecordPrefix + 4, 0);
    std::byte* at = p + kDeleteFixed;
    for (uint32_t i = 0; i < count; ++i) {
        if (skip && skip[i])
            continue;
        put64(at, ids[i]);
        at += 8;
    }
    return bytes;
}

ktl::Result<size_t> encode_upsert(std::span<std::byte> out, std::string_view name, uint32_t dim, uint32_t count,
                                  uint64_t provenance, const uint64_t* ids, const float* vectors) {
    const size_t bytes = upsert_record_bytes(dim, count);
    if (!name_ok(name) || bytes == 0 || count == 0 || !ids || !vectors)
        return ktl::Error::InvalidArgs;
    if (out.size() < bytes)
        return ktl::Error::OutOfRange;
    std::byte* p = out.data();
    put_prefix(p, name);
    put32(p + kRecordPrefix, dim);
    put32(p + kRecordPrefix + 4, count);
    put64(p + kRecordPrefix + 8, provenance);
    // Both sides are little-endian: the arrays go over as they are.
    std::memcpy(p + kUpsertFixed, ids, 8ull * count);
    std::memcpy(p + kUpsertFixed + 8ull * count, vectors, 4ull * dim * count);
    return bytes;
}

ktl::Result<DecodedRecord> decode_record(uint16_t type, std::span<const std::byte> payload) {
    DecodedRecord d {};
    if (type == uint16_t(RecordType::Audit)) {
        if (payload.empty() || payload.size() > kMaxAuditRecord)
            return ktl::Error::Corrupt;
        d.type = RecordType::Audit;
        d.audit = payload;
        return d;
    }
    if (is_raft_record(type)) { // lib/raft/log_records decodes it
        if (payload.empty() || payload.size() > kMaxRaftRecord)
            return ktl::Error::Corrupt;
        d.type = static_cast<RecordType>(type);
        d.raft = payload;
        return d;
    }
    const bool document = type == uint16_t(RecordType::DocUpsert) || type == uint16_t(RecordType::DocDelete);
    if (((type < 1 || type > 4) && !document) || payload.size() < kRecordPrefix)
        return ktl::Error::Corrupt;
    d.type = static_cast<RecordType>(type);
    const std::byte* p = payload.data();
    const size_t len = std::to_integer<size_t>(p[0]);
    if (len == 0 || len > kRecordNameMax)
        return ktl::Error::Corrupt;
    for (size_t i = 1 + len; i < kRecordPrefix; ++i)
        if (p[i] != std::byte(0))
            return ktl::Error::Corrupt;
    d.name = { reinterpret_cast<const char*>(p + 1), len };
    switch (d.type) {
    case RecordType::Create: {
        if (payload.size() != kCreateRecordBytes)
            return ktl::Error::Corrupt;
        uint32_t f[7];
        for (size_t i = 0; i < 7; ++i)
            f[i] = get32(p + kRecordPrefix + 4 * i);
        d.create = { f[0], f[1], f[2], f[3], f[4], f[5], f[6] };
        return d;
    }
    case RecordType::DocUpsert:
    case RecordType::DocDelete:
        if (document_record_bytes(payload.size() - kRecordPrefix) != payload.size())
            return ktl::Error::Corrupt;
        d.body = payload.subspan(kRecordPrefix);
        return d;
    case RecordType::Drop:
        if (payload.size() != kDropRecordBytes)
            return ktl::Error::Corrupt;
        return d;
    case RecordType::Delete: {
        if (payload.size() < kDeleteFixed)
            return ktl::Error::Corrupt;
        const uint32_t count = get32(p + kRecordPrefix);
        if (get32(p + kRecordPrefix + 4) != 0 || delete_record_bytes(count) != payload.size())
            return ktl::Error::Corrupt;
        d.delete_count = count;
        d.delete_ids = p + kDeleteFixed;
        return d;
    }
    case RecordType::Audit: // above
    case RecordType::RaftTerm:
    case RecordType::RaftAppend:
    case RecordType::RaftTruncate:
    case RecordType::RaftSnapshot:
    case RecordType::RaftForget: break;
    case RecordType::Upsert: {
        if (payload.size() < kUpsertFixed)
            return ktl::Error::Corrupt;
        const uint32_t dim = get32(p + kRecordPrefix);
        const uint32_t count = get32(p + kRecordPrefix + 4);
        if (count == 0 || upsert_record_bytes(dim, count) != payload.size())
            return ktl::Error::Corrupt;
        d.upsert = { dim, count, get64(p + kRecordPrefix + 8), p + kUpsertFixed, p + kUpsertFixed + 8ull * count };
        return d;
    }
    }
    return ktl::Error::Corrupt;
}

} // namespace storage
