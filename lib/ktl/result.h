#pragma once
// Result<T>: value-or-error without exceptions (kernel code is built with -fno-exceptions).
#include <cstdint>
#include <type_traits>
#include <utility>

namespace ktl {

enum class Error : uint16_t {
    None = 0,
    NoMemory,
    AccessDenied,
    BadHandle,
    InvalidArgs,
    WouldBlock,
    TimedOut,
    NotFound,
    OutOfRange,
    Truncated,
    Corrupt,
    Unsupported,
    Exists,
    Full,
    WrongType, // a capability names an object of another type
    Exhausted, // a budget (the task's system calls) is used up
    IoError,   // a device reported that a transfer failed
    NoSpace,   // the disk (its log) has no room left
    NotReady,  // still being brought up (the store while it is recovered from the disk)
    NotLeader, // a replicated change reached a member of the consensus group that does not lead it
    NotVoter,  // ... or a node that is no voter of it (a spare, or a voter replaced while it was down)
    Elsewhere, // a replicated collection whose voters are other nodes: this one holds no copy of it
};

constexpr const char* error_name(Error e) {
    switch (e) {
    case Error::None: return "none";
    case Error::NoMemory: return "no_memory";
    case Error::AccessDenied: return "access_denied";
    case Error::BadHandle: return "bad_handle";
    case Error::InvalidArgs: return "invalid_args";
    case Error::WouldBlock: return "would_block";
    case Error::TimedOut: return "timed_out";
    case Error::NotFound: return "not_found";
    case Error::OutOfRange: return "out_of_range";
    case Error::Truncated: return "truncated";
    case Error::Corrupt: return "corrupt";
    case Error::Unsupported: return "unsupported";
    case Error::Exists: return "exists";
    case Error::Full: return "full";
    case Error::WrongType: return "wrong_type";
    case Error::Exhausted: return "exhausted";
    case Error::IoError: return "io_error";
    case Error::NoSpace: return "no_space";
    case Error::NotReady: return "not_ready";
    case Error::NotLeader: return "not_leader";
    case Error::NotVoter: return "not_voter";
    case Error::Elsewhere: return "elsewhere";
    }
    return "unknown";
}

template <typename T>
class [[nodiscard]] Result {
public:
    Result(const T& v) : m_value(v), m_error(Error::None) {}
    Result(T&& v) : m_value(std::move(v)), m_error(Error::None) {}
    Result(Error e) : m_value(), m_error(e) {}

    bool ok() const { return m_error == Error::None; }
    explicit operator bool() const { return ok(); }
    Error error() const { return m_error; }
    T& value() { return m_value; }
    const T& value() const { return m_value; }
    T* operator->() { return &m_value; }
    const T* operator->() const { return &m_value; }
    T& operator*() { return m_value; }
    const T& operator*() const { return m_value; }
    T value_or(T fallback) const { return ok() ? m_value : fallback; }

private:
    static_assert(std::is_default_constructible_v<T>, "Result<T> needs a default-constructible T");
    T m_value;
    Error m_error;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() : m_error(Error::None) {}
    Result(Error e) : m_error(e) {}
    bool ok() const { return m_error == Error::None; }
    explicit operator bool() const { return ok(); }
    Error error() const { return m_error; }

private:
    Error m_error;
};

} // namespace ktl

// TRY: propagate an error to the caller; evaluates to the value on success (GNU statement expression).
#define TRY(expr) \
    ({ \
        auto _try_result = (expr); \
        if (!_try_result.ok()) \
            return _try_result.error(); \
        std::move(_try_result.value()); \
    })

#define TRY_VOID(expr) \
    do { \
        auto _try_result = (expr); \
        if (!_try_result.ok()) \
            return _try_result.error(); \
    } while (0)
