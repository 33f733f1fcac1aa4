// ToolContext: what a tool body sees of its call (tool_exec.h), on the tool task's side.
#include "tool_job.h"

#include "../clock.h"
#include <abi/sys.h>

#include <ktl/utf8.h>

namespace mcpd {

bool ToolContext::expired() const { return clock::monotonic_ns() >= job->deadline_ns; }
bool ToolContext::cancelled() const { return job->cancel; }
const char* ToolContext::tool() const { return job->call.tool; }
bool ToolContext::elsewhere() const { return job->elsewhere; }
uint64_t ToolContext::provenance() const { return job->call.provenance_id; }

void ToolContext::progress(uint64_t done, uint64_t total, const char* message) const {
    // One report in flight: wait (bounded) until the bridge has sent the previous one, so a
    // client sees every step in order instead of the latest only.
    for (int i = 0;
         i < 200 && __atomic_load_n(&job->progress_sent, __ATOMIC_ACQUIRE) != job->progress_seq && !should_stop(); ++i)
        sys::sleep_ns(1'000'000);
    size_t i = 0;
    for (; message && message[i] && i + 1 < sizeof job->message; ++i)
        job->message[i] = message[i];
    job->message[i] = '\0';
    job->done = done;
    job->total = total;
    job->progress_seq = job->progress_seq + 1;
    if (job->wake)
        job->wake();
}

bool ToolContext::log(mcp::LogLevel level, const char* text) const {
    while (job->log_head - __atomic_load_n(&job->log_tail, __ATOMIC_ACQUIRE) == Job::kLogSlots) {
        if (should_stop())
            return false;
        sys::sleep_ns(1'000'000);
    }
    Job::LogSlot& slot = job->logs[job->log_head % Job::kLogSlots];
    // Cut between characters: the record stays valid UTF-8.
    ktl::utf8_copy(slot.text, sizeof slot.text,
                   text ? std::string_view(text, __builtin_strnlen(text, sizeof slot.text)) : "");
    slot.level = level;
    __atomic_store_n(&job->log_head, job->log_head + 1, __ATOMIC_RELEASE);
    if (job->wake)
        job->wake();
    return true;
}

bool ToolContext::in_rounds() const { return job->call.modern; }

bool ToolContext::can_ask(std::string_view method) const { return mcp::may_ask(job->call.client_caps, method); }

bool ToolContext::from_round(std::string_view key, std::string_view method, ClientAnswer& answer, mcp::ToolError& err,
                             std::span<char>& params) const {
    params = {};
    mcp::InputRound* round = job->round;
    if (!round) {
        err = { mcp::ErrorCode::InternalError, "this tool has no input round" };
        return false;
    }
    if (!can_ask(method)) {
        err = { mcp::ErrorCode::ValidationFailed,
                "the client did not declare the capability this needs (sampling, elicitation or roots)",
                "client_capability_missing" };
        return false;
    }
    json::Value given = round->answer(key);
    if (given.valid()) {
        answer.value = given;
        answer.is_error = false;
        return true;
    }
    params = round->params_buffer();
    return false;
}

bool ToolContext::ask_round(std::string_view key, std::string_view method, const json::Writer& params,
                            mcp::ToolError& err) const {
    if (!params.complete() || !job->round->ask(key, method, params.size())) {
        err = { mcp::ErrorCode::ValidationFailed, "the input requests of this round are over their limit",
                "request_too_large" };
        return false;
    }
    err = { mcp::ErrorCode::ValidationFailed, "waiting for the client's input", "input_required" };
    return false;
}

mcp::ClientExchange* ToolContext::exchange(std::string_view method, mcp::ToolError& err) const {
    if (!can_ask(method)) {
        err = { mcp::ErrorCode::ValidationFailed,
                mcp::capability_for(method) == 0
                    ? "not a request this server sends to clients"
                    : "the client did not declare the capability this needs (sampling or elicitation)",
                "client_capability_missing" };
        return nullptr;
    }
    // The bridge allocates it (Executor::poll), so it never belongs to this task, whose memory
    // the kernel takes back if it dies: wait for it, bounded by the call's own stop.
    mcp::ClientExchange* ex = __atomic_load_n(&job->exchange, __ATOMIC_ACQUIRE);
    if (!ex) {
        job->exchange_wanted = true;
        if (job->wake)
            job->wake();
        while (!(ex = __atomic_load_n(&job->exchange, __ATOMIC_ACQUIRE)) && !job->exchange_refused && !should_stop())
            sys::sleep_ns(1'000'000);
    }
    if (!ex)
        err = job->exchange_refused
                  ? mcp::ToolError { mcp::ErrorCode::InternalError, "no memory for a request to the client" }
              : cancelled() ? mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client" }
                            : mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "stopped at the wall-time limit" };
    return ex;
}

bool ToolContext::await(mcp::ClientExchange& ex, std::string_view method, const json::Writer& params,
                        ClientAnswer& answer, mcp::ToolError& err, uint64_t timeout_ns) const {
    if (!params.complete()) {
        err = { mcp::ErrorCode::ValidationFailed, "request to the client over 8 KiB", "request_too_large" };
        return false;
    }
    if (!ex.queue(method, params.size())) {
        err = { mcp::ErrorCode::InternalError, "a request to the client is already outstanding" };
        return false;
    }
    if (job->wake)
        job->wake();
    uint64_t until = timeout_ns ? clock::monotonic_ns() + timeout_ns : ~0ull;
    // Bounded by the call's deadline (should_stop() holds past it). Once the bridge has begun
    // copying an answer it cannot be withdrawn: wait the few microseconds until it is in.
    while (ex.state() != mcp::ClientExchange::State::Answered) {
        bool stop = should_stop() || clock::monotonic_ns() >= until;
        if (stop && ex.withdraw()) {
            err = cancelled()
                      ? mcp::ToolError { mcp::ErrorCode::InternalError, "cancelled by the client" }
                      : mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded, "no answer from the client in time" };
            return false;
        }
        sys::sleep_ns(stop ? 100'000 : 2'000'000);
    }
    switch (ex.outcome()) {
    case mcp::ClientExchange::Outcome::TooLarge:
        err = { mcp::ErrorCode::ValidationFailed, "the client's answer is over 16 KiB", "response_too_large" };
        return false;
    case mcp::ClientExchange::Outcome::Unsent:
        err = { mcp::ErrorCode::InternalError, "the request to the client could not be sent" };
        return false;
    case mcp::ClientExchange::Outcome::Result:
    case mcp::ClientExchange::Outcome::Error: break;
    }
    auto doc = json::Document::parse(ex.response(), ex.nodes());
    if (!doc) {
        err = { mcp::ErrorCode::ValidationFailed, "the client's answer has too many values", "response_too_complex" };
        return false;
    }
    answer.doc = *doc;
    answer.value = answer.doc.root();
    answer.is_error = ex.outcome() == mcp::ClientExchange::Outcome::Error;
    return true;
}

} // namespace mcpd
