#pragma once
// The stable machine codes of the canonical error envelope (docs/security.md) and the HTTP
// status each maps to when it is a transport-level failure.
#include <cstdint>
#include <string_view>

namespace mcp {

enum class ErrorCode : uint8_t {
    AuthMissingApiKey,
    AuthInvalidApiKey,
    AuthInsufficientRole,
    ValidationUnknownTool,
    ValidationFailed,
    LimitRateExceeded,
    LimitConcurrencyExceeded,
    LimitTimeExceeded,
    LimitOutputExceeded,
    LimitSyscallsExceeded, // the call's tool task used up its system-call budget (contracts: per-call limits)
    NotFound,
    // The sink policy (sink_policy.h): a destructive call from untrusted provenance did not run.
    StepUpRequired, // no human could be asked: a proposal awaits an administrator (details.proposal_id)
    StepUpRefused,  // the human said no, or typed the wrong name (details.reason)
    StorageFull,    // the disk's log has no room: the write was not done (reads go on)
    // Not now, later: what the call needs is not there yet (the store being recovered from the
    // disk at boot). Nothing was done; the same call may succeed after details.retry_after_ms.
    Unavailable,
    InternalError, // last: parse_error_code walks the codes up to it
};

const char* error_code_name(ErrorCode code); // "auth_missing_api_key", ...
// The code named by an envelope's error.code; false for names that are not ours.
bool parse_error_code(std::string_view name, ErrorCode& out);
// 401, 403, 429 for transport-level failures; 200 for errors carried inside JSON-RPC.
uint16_t http_status(ErrorCode code);

} // namespace mcp
