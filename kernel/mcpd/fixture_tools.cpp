// Bodies of the conformance fixtures. The content ones are the portable run() of mcp/fixtures;
// the ones that log, report progress, wait or ask the client use the ToolContext
// (tools-call-with-logging, tools-call-with-progress: notifications in order, about 50 ms apart,
// before the result; sampling and elicitation: a request to the client, then the result).
#include "fixture_tools.h"
#include "tool_exec.h"

#include "../bootargs.h"
#include "../cap/kcap.h"
#include "../syscall/sys.h"

#include <mcp/fixtures/conformance.h>

namespace mcpd {
namespace {

namespace fx = mcp::fixtures;

constexpr uint64_t kStepNs = 50'000'000;

template <bool (*Run)(const json::Value&, json::Writer&, mcp::ToolError&)>
bool content(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext&) {
    return Run(args, w, err);
}

// Sleeps ns in slices, false (with the reason in err) as soon as the call is told to stop.
bool pause(const ToolContext& ctx, uint64_t ns, mcp::ToolError& err) {
    for (uint64_t slept = 0; slept < ns; slept += 10'000'000) {
        if (ctx.should_stop()) {
            err = ctx.cancelled() ? mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client" }
                                  : mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" };
            return false;
        }
        sys::sleep_ns(10'000'000);
    }
    return true;
}

bool with_logging(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    constexpr const char* kSteps[] = { "Tool execution started", "Tool processing data", "Tool execution completed" };
    for (size_t i = 0; i < 3; ++i) {
        if ((i > 0 && !pause(ctx, kStepNs, err)) || !ctx.log(mcp::LogLevel::Info, kSteps[i]))
            return false;
    }
    fx::text_content(w, "Tool with logging executed successfully");
    return true;
}

bool with_progress(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    for (uint64_t done = 0; done <= 100; done += 50) {
        if (done > 0 && !pause(ctx, kStepNs, err))
            return false;
        ctx.progress(done, 100, "");
    }
    fx::text_content(w, "Tool with progress executed successfully");
    return true;
}

bool reconnection(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    if (!pause(ctx, 2 * kStepNs, err))
        return false;
    fx::text_content(w, "Reconnection test completed");
    return true;
}

// tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums: one request to the client (refused here when the client did not
// declare the capability), the content made of its answer.
bool ask_client(const json::Value& args, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    const fx::ClientAsk* ask = fx::client_ask(ctx.tool());
    if (!ask) {
        err = { mcp::ErrorCode::InternalError, "no request for this tool" };
        return false;
    }
    ClientAnswer answer;
    if (!ctx.request(ask->method, [&](json::Writer& p) { ask->params(args, p); }, answer, err))
        return false;
    if (answer.is_error) {
        err = { mcp::ErrorCode::InternalError, "the client refused the request" };
        return false;
    }
    return ask->answer(answer.value, w, err);
}

const ToolImpl kImpls[] = {
    { "test_simple_text", content<fx::simple_text>, Grant::Nothing, kcap::kRead },
    { "test_image_content", content<fx::image_content>, Grant::Nothing, kcap::kRead },
    { "test_audio_content", content<fx::audio_content>, Grant::Nothing, kcap::kRead },
    { "test_embedded_resource", content<fx::embedded_resource>, Grant::Nothing, kcap::kRead },
    { "test_multiple_content_types", content<fx::multiple_content_types>, Grant::Nothing, kcap::kRead },
    { "test_tool_with_logging", with_logging, Grant::Nothing, kcap::kRead },
    { "test_tool_with_progress", with_progress, Grant::Nothing, kcap::kRead },
    { "test_error_handling", content<fx::error_handling>, Grant::Nothing, kcap::kRead },
    { "test_reconnection", reconnection, Grant::Nothing, kcap::kRead },
    { "json_schema_2020_12_tool", content<fx::json_schema_2020_12>, Grant::Nothing, kcap::kRead },
    { "test_sampling", ask_client, Grant::Nothing, kcap::kRead },
    { "test_elicitation", ask_client, Grant::Nothing, kcap::kRead },
    { "test_elicitation_sep1034_defaults", ask_client, Grant::Nothing, kcap::kRead },
    { "test_elicitation_sep1330_enums", ask_client, Grant::Nothing, kcap::kRead },
};

} // namespace

bool conformance_profile() { return bootargs::get().profile == "conformance"; }
std::span<const ToolImpl> fixture_tool_impls() { return kImpls; }

} // namespace mcpd
