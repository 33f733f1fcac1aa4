#include "embedder.h"

#include "../log.h"
#include "../platform.h"

#include <cstddef>

namespace embedder {
namespace {

State g_state = State::Absent;
text::EmbedModel g_model;
uint64_t g_bytes = 0;

} // namespace

void init() {
    const platform::Info& p = platform::info();
    if (p.model_refused) {
        g_state = State::Misplaced;
        KLOG_WARN("embedder: model= names memory the kernel cannot give it (not free RAM): running without a model");
        return;
    }
    if (p.model_base == 0)
        return; // (Absent: said by kernel://status, nothing to log)
    g_bytes = p.model_bytes;
    const auto* file = reinterpret_cast<const std::byte*>(p.model_base);
    auto opened = text::EmbedModel::open({ file, static_cast<size_t>(p.model_bytes) });
    if (!opened) {
        g_state = opened.error() == ktl::Error::Unsupported ? State::Unsupported : State::Corrupt;
        KLOG_WARN("embedder: the model at %#llx (%llu bytes) is %s: running without one",
                  static_cast<unsigned long long>(p.model_base), static_cast<unsigned long long>(p.model_bytes),
                  g_state == State::Unsupported ? "not one this kernel reads" : "damaged");
        return;
    }
    g_model = *opened;
    g_state = State::Loaded;
    KLOG_INFO("embedder: model '%.*s': %u words x %u dimensions, %llu bytes", int(g_model.source().size()),
              g_model.source().data(), g_model.words(), g_model.dim(), static_cast<unsigned long long>(g_bytes));
}

State state() { return g_state; }

const char* state_name(State s) {
    switch (s) {
    case State::Absent: return "absent";
    case State::Loaded: return "loaded";
    case State::Misplaced: return "misplaced";
    case State::Corrupt: return "corrupt";
    case State::Unsupported: return "unsupported";
    }
    return "?";
}

const text::EmbedModel* model() { return g_state == State::Loaded ? &g_model : nullptr; }
uint64_t bytes() { return g_bytes; }

uint32_t dim() { return model() ? model()->dim() : 0; }

} // namespace embedder
