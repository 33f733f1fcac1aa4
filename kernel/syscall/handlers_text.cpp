// The embedder's system call (issue 37; docs/documents.md): a text's vector from the model the
// board loaded (kernel/text/embedder.h). Read-only work on a read-only model: any holder of the
// store's Read right may ask.
#include "../text/embedder.h"
#include "buffers.h"
#include "handlers.h"

namespace handlers {
namespace {

constexpr uint64_t kMaxText = 64 * 1024;
int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }

} // namespace

int64_t text_embed(const kcap::Resolved&, Cap, const char* text, uint64_t length, float* out, uint64_t dim) {
    const text::EmbedModel* model = embedder::model();
    if (!model)
        return err(ktl::Error::NotReady);
    if (dim == 0)
        return model->dim();
    if (length > kMaxText || dim < model->dim() || (length && !buffers::readable(text, length, kMaxText)) ||
        !buffers::writable(out, model->dim() * sizeof(float)))
        return err(ktl::Error::InvalidArgs);
    return static_cast<int64_t>(
        model->embed({ text, static_cast<size_t>(length) }, { out, static_cast<size_t>(model->dim()) }));
}

} // namespace handlers
