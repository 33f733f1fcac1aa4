#include "raft_stream_reader.h"

#include <cstring>

namespace kraft {

raft_snapshot* engine_snapshot(const raftlog::SnapshotView& s) {
    auto* out = static_cast<raft_snapshot*>(raft_calloc(1, sizeof(raft_snapshot)));
    auto* bufs = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
    void* data = raft_malloc(s.data.empty() ? 1 : s.data.size());
    if (!out || !bufs || !data) {
        raft_free(out);
        raft_free(bufs);
        raft_free(data);
        return nullptr;
    }
    raft_configuration_init(&out->configuration);
    const raft_buffer conf { const_cast<std::byte*>(s.conf.data()), s.conf.size() };
    if (raft_configuration_decode(&conf, &out->configuration) != 0) {
        raft_configuration_close(&out->configuration);
        raft_free(out);
        raft_free(bufs);
        raft_free(data);
        return nullptr;
    }
    if (!s.data.empty())
        std::memcpy(data, s.data.data(), s.data.size());
    out->index = s.index;
    out->term = s.term;
    out->configuration_index = s.conf_index;
    bufs[0].base = data;
    bufs[0].len = s.data.size();
    out->bufs = bufs;
    out->n_bufs = 1;
    return out;
}

void free_engine_snapshot(raft_snapshot* s) {
    if (!s)
        return;
    raft_configuration_close(&s->configuration);
    for (unsigned i = 0; i < s->n_bufs; ++i)
        raft_free(s->bufs[i].base);
    raft_free(s->bufs);
    raft_free(s);
}

bool StreamReader::set_term(uint64_t term, uint64_t) {
    m_term = term;
    return true;
}

bool StreamReader::append(const raftlog::EntryView& e) {
    if (!m_out) { // counting only
        ++m_count;
        return true;
    }
    if (m_count == m_capacity)
        return false;
    void* data = raft_malloc(e.data.empty() ? 1 : e.data.size());
    if (!data)
        return false;
    if (!e.data.empty())
        std::memcpy(data, e.data.data(), e.data.size());
    raft_entry& out = m_out[m_count++];
    out.term = e.term;
    out.type = static_cast<raft_entry_type>(e.type);
    out.buf.base = data;
    out.buf.len = e.data.size();
    out.batch = data;
    return true;
}

bool StreamReader::set_snapshot(const raftlog::SnapshotView& s, uint64_t start) {
    raft_snapshot* snapshot = engine_snapshot(s);
    if (!snapshot)
        return false;
    free_engine_snapshot(m_snapshot);
    m_snapshot = snapshot;
    m_start = start;
    return true;
}

void StreamReader::release() {
    if (m_out && !m_kept)
        for (size_t i = 0; i < m_count; ++i)
            raft_free(m_out[i].batch);
    if (!m_kept)
        m_count = 0;
    free_engine_snapshot(m_snapshot);
    m_snapshot = nullptr;
}

} // namespace kraft
