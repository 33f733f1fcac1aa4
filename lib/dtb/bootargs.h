#pragma once
// Kernel command line helpers: space-separated `key` and `key=value` tokens.
#include <optional>
#include <string_view>

namespace dtb {

// Value of the last `key=value` token, if any.
std::optional<std::string_view> bootarg_value(std::string_view args, std::string_view key);
// Calls fn with the value of every `key=value` token, in order (repeatable arguments).
void bootarg_values(std::string_view args, std::string_view key, void (*fn)(std::string_view value, void* ctx),
                    void* ctx);
// True for a bare `key` token or `key=1|on|true|yes`.
bool bootarg_flag(std::string_view args, std::string_view key);

} // namespace dtb
