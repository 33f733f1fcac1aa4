// Bodies of the conformance fixtures. The content ones are the portable run() of mcp/fixtures;
// the ones that log, report progress, wait or ask the client use the ToolContext
// (tools-call-with-logging, tools-call-with-progress: notifications in order, about 50 ms apart,
// before the result; sampling and elicitation: a request to the client, then the result).
#include "fixture_tools.h"
#include "tool_exec.h"

#include "../bootargs.h"
#include "../cap/kcap.h"
#include "../syscall/sys.h"

#include <ktl/format.h>
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
    if (!ctx.request(ask->tool, ask->method, [&](json::Writer& p) { ask->params(args, p); }, answer, err))
        return false;
    if (answer.is_error) {
        err = { mcp::ErrorCode::InternalError, "the client refused the request" };
        return false;
    }
    return ask->answer(answer.value, w, err);
}

// The input-required-result fixtures: each ask of the tool's table (fx::InputTool), all in one
// round, or one per round; the text names every answer. In the 2025 revisions every ask is a
// request to the client, one after the other.
bool in_rounds(const json::Value&, json::Writer& w, mcp::ToolError& err, const ToolContext& ctx) {
    const fx::InputTool* tool = fx::input_tool(ctx.tool());
    if (!tool) {
        err = { mcp::ErrorCode::InternalError, "no asks for this tool" };
        return false;
    }
    char text[fx::kMaxAnswerText];
    ktl::Formatter f(text, sizeof text);
    bool all = true;
    size_t asked = 0;
    mcp::ToolError first_err;
    for (const fx::InputAsk& ask : tool->asks) {
        if (tool->declared_only && !ctx.can_ask(ask.method))
            continue;
        ++asked;
        ClientAnswer answer;
        mcp::ToolError e;
        char said[256];
        bool ok = ctx.request(ask.key, ask.method, [&](json::Writer& p) { p.raw(ask.params); }, answer, e);
        if (ok && answer.is_error) {
            ok = false;
            e = { mcp::ErrorCode::InternalError, "the client refused the request" };
        }
        if (ok && !fx::summarize(ask, answer.value, said, sizeof said, e))
            ok = false;
        if (!ok) {
            if (all)
                first_err = e;
            all = false;
            if (tool->one_at_a_time)
                break; // the next ask depends on this one: it waits for the next round
            continue;  // ask the rest too: the client answers them all in one round
        }
        f.append("%s%s", f.length() ? "; " : "", said);
    }
    if (asked == 0) {
        err = { mcp::ErrorCode::ValidationFailed, "the client declared none of the capabilities this tool asks through",
                "client_capability_missing" };
        return false;
    }
    if (!all) {
        err = first_err;
        return false;
    }
    fx::text_content(w, f.c_str());
    return true;
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
    { "test_sampling", ask_client, Grant::Nothing, kcap::kRead, true },
    { "test_elicitation", ask_client, Grant::Nothing, kcap::kRead, true },
    { "test_elicitation_sep1034_defaults", ask_client, Grant::Nothing, kcap::kRead, true },
    { "test_elicitation_sep1330_enums", ask_client, Grant::Nothing, kcap::kRead, true },
    { "test_custom_headers", content<fx::custom_headers>, Grant::Nothing, kcap::kRead },
    { "test_missing_capability", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_logging_tool", with_logging, Grant::Nothing, kcap::kRead },
    { "test_streaming_elicitation", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_elicitation", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_sampling", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_list_roots", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_request_state", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_multiple_inputs", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_multi_round", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_tampered_state", in_rounds, Grant::Nothing, kcap::kRead, true },
    { "test_input_required_result_capabilities", in_rounds, Grant::Nothing, kcap::kRead, true },
};

} // namespace

bool conformance_profile() { return bootargs::get().profile == "conformance"; }
std::span<const ToolImpl> fixture_tool_impls() { return kImpls; }

} // namespace mcpd
