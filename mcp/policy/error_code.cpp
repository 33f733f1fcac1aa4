#include "error_code.h"

namespace mcp {

const char* error_code_name(ErrorCode code) {
    switch (code) {
    case ErrorCode::AuthMissingApiKey: return "auth_missing_api_key";
    case ErrorCode::AuthInvalidApiKey: return "auth_invalid_api_key";
    case ErrorCode::AuthInsufficientRole: return "auth_insufficient_role";
    case ErrorCode::ValidationUnknownTool: return "validation_unknown_tool";
    case ErrorCode::ValidationFailed: return "validation_failed";
    case ErrorCode::LimitRateExceeded: return "limit_rate_exceeded";
    case ErrorCode::LimitConcurrencyExceeded: return "limit_concurrency_exceeded";
    case ErrorCode::LimitTimeExceeded: return "limit_time_exceeded";
    case ErrorCode::LimitOutputExceeded: return "limit_output_exceeded";
    case ErrorCode::LimitSyscallsExceeded: return "limit_syscalls_exceeded";
    case ErrorCode::NotFound: return "not_found";
    case ErrorCode::StepUpRequired: return "step_up_required";
    case ErrorCode::StepUpRefused: return "step_up_refused";
    case ErrorCode::StorageFull: return "storage_full";
    case ErrorCode::Unavailable: return "unavailable";
    case ErrorCode::InternalError: return "internal_error";
    }
    return "internal_error";
}

bool parse_error_code(std::string_view name, ErrorCode& out) {
    for (uint8_t i = 0; i <= uint8_t(ErrorCode::InternalError); ++i)
        if (name == error_code_name(ErrorCode(i))) {
            out = ErrorCode(i);
            return true;
        }
    return false;
}

uint16_t http_status(ErrorCode code) {
    switch (code) {
    case ErrorCode::AuthMissingApiKey: return 401;
    case ErrorCode::AuthInvalidApiKey:
    case ErrorCode::AuthInsufficientRole: return 403;
    case ErrorCode::LimitRateExceeded:
    case ErrorCode::LimitConcurrencyExceeded: return 429;
    default: return 200;
    }
}

} // namespace mcp
