#pragma once
// A document collection's work in the vector store's workers (docs/documents.md): its requests
// (Op::DocUpsert, DocDelete, DocSearch, DocGet) and its share of Stats, Export and Load. The
// system calls in handlers_documents.cpp checked the caller's buffers; the bytes in them are read
// here as lib/text/doc_batch.h's forms, distrusted again (shared memory may change meanwhile).
#include <cstdint>
#include <span>

#include <ktl/result.h>

#include "collection.h"
#include "service.h"

namespace vector::documents {

int64_t execute(Collection& c, const Job& job);
int64_t stats(const Collection& c, abi::VectorStats& out);
int64_t export_range(const Collection& c, const Job& job);
// A collection from a documents snapshot (text::is_snapshot): its words indexed again, its
// embeddings' index loaded as kept (embedded again only for another model than this boot's).
ktl::Result<Collection*> load(std::span<const std::byte> snapshot, uint32_t capacity);
// A new empty document collection for `max_docs` documents of about `text_bytes_each` bytes (0:
// text::kDefaultTextBytesEach).
ktl::Result<Collection*> create(uint32_t max_docs, uint32_t text_bytes_each);

} // namespace vector::documents
