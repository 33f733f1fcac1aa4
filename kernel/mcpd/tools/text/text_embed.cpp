// text_embed: the embedder's vectors for texts (issue 37; docs/documents.md), for programs that
// want the vectors themselves. Its token grants the store, read only (the model is the store's
// text service: system call text_embed).
#include "../schemas.h"
#include "../tool_def.h"
#include "../vector/vector_family.h"
#include <abi/rights.h>
#include <abi/sys.h>

#include <mcp/policy/roles.h>

namespace mcpd::tools {
namespace {

constexpr size_t kMaxTexts = 16;
constexpr size_t kMaxTextBytes = 65536;
constexpr uint32_t kMaxDim = 1024;

constexpr const char* kEmbedIn =
    R"({"type":"object","properties":{"texts":{"type":"array","minItems":1,"maxItems":16,)"
    R"("items":{"type":"string","maxLength":65536},"description":"the texts to embed, each up to 64 KiB"}},)"
    R"("required":["texts"],"additionalProperties":false})";
constexpr const char* kEmbedOut =
    R"({"type":"object","properties":{"dimensions":{"type":"integer"},"model":{"type":"string"},)"
    R"("embeddings":{"type":"array","items":{"type":"object","properties":{)"
    R"("vector":{"type":"array","items":{"type":"number"},"description":"unit length; all zero when no word is known"},)"
    R"("known_words":{"type":"integer","description":"the text's words the model knows"}}}}},)"
    R"("required":["dimensions","embeddings"]})";

bool run(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    const int64_t dim = sys::text_embed(ctx.cap, nullptr, 0, nullptr, 0);
    if (dim == -static_cast<int64_t>(ktl::Error::NotReady)) {
        err = { mcp::ErrorCode::Unavailable,
                "no embedding model is loaded on this appliance (kernel://status: embedder; ./basalt run loads "
                "build/model/basalt-embed.bin)",
                "no_model" };
        return false;
    }
    if (dim <= 0 || dim > kMaxDim) {
        err = vec::error_of(dim <= 0 ? dim : -static_cast<int64_t>(ktl::Error::Unsupported));
        return false;
    }
    vec::Scratch mem(kMaxTextBytes + size_t(dim) * sizeof(float));
    if (!mem.ok()) {
        err = { mcp::ErrorCode::InternalError, "no memory for the texts", "no_memory" };
        return false;
    }
    char* text = mem.as<char>();
    float* vector = mem.as<float>(kMaxTextBytes);
    w.begin_object().key("dimensions").number(static_cast<uint64_t>(dim)).key("embeddings").begin_array();
    size_t n = 0;
    for (json::Value t = args.find("texts").first(); t.valid() && n < kMaxTexts; t = t.next_sibling(), ++n) {
        const auto got = t.string_into({ text, kMaxTextBytes });
        if (!got) {
            err = { mcp::ErrorCode::ValidationFailed, "each text is a string of at most 64 KiB", "invalid_text" };
            return false;
        }
        const int64_t known = sys::text_embed(ctx.cap, text, *got, vector, static_cast<uint64_t>(dim));
        if (known < 0) {
            err = vec::error_of(known);
            return false;
        }
        w.begin_object().key("vector").begin_array();
        for (int64_t d = 0; d < dim; ++d)
            w.number_f32(vector[d]); // (a float's shortest text: 9 digits at most, not a double's 17)
        w.end_array().key("known_words").number(static_cast<uint64_t>(known)).end_object();
    }
    w.end_array().end_object();
    return true;
}

constexpr mcp::Tool kTool = { "text_embed",
                              "Turn texts into vectors",
                              "The appliance's own embedding of each text (100 dimensions, unit length; words the "
                              "model does not know are skipped): store them with vector_upsert, or search with them.",
                              kEmbedIn,
                              kEmbedOut,
                              mcp::kVectorRead,
                              nullptr,
                              mcp::ToolResult::Structured,
                              0,
                              "read",
                              nullptr };

} // namespace

MCPD_TOOL(text_embed) { kTool, run, Grant::Store, abi::kRead, Effect::read_only() };

} // namespace mcpd::tools
