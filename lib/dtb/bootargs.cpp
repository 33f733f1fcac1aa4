#include "bootargs.h"
#include "text.h"

namespace dtb {
namespace {

template <typename Fn>
void for_each_token(std::string_view args, Fn&& fn) {
    size_t i = 0;
    while (i < args.size()) {
        while (i < args.size() && (args[i] == ' ' || args[i] == '\t' || args[i] == '\n'))
            ++i;
        size_t start = i;
        while (i < args.size() && args[i] != ' ' && args[i] != '\t' && args[i] != '\n')
            ++i;
        if (i > start)
            fn(text::head(text::tail(args, start), i - start));
    }
}

} // namespace

void bootarg_values(std::string_view args, std::string_view key, void (*fn)(std::string_view value, void* ctx),
                    void* ctx) {
    for_each_token(args, [&](std::string_view tok) {
        if (tok.size() > key.size() && text::head(tok, key.size()) == key && tok[key.size()] == '=')
            fn(text::tail(tok, key.size() + 1), ctx);
    });
}

std::optional<std::string_view> bootarg_value(std::string_view args, std::string_view key) {
    std::optional<std::string_view> found;
    for_each_token(args, [&](std::string_view tok) {
        if (tok.size() > key.size() && text::head(tok, key.size()) == key && tok[key.size()] == '=')
            found = text::tail(tok, key.size() + 1);
    });
    return found;
}

bool bootarg_flag(std::string_view args, std::string_view key) {
    bool flag = false;
    for_each_token(args, [&](std::string_view tok) {
        if (tok == key)
            flag = true;
    });
    if (auto v = bootarg_value(args, key))
        flag = *v == "1" || *v == "on" || *v == "true" || *v == "yes";
    return flag;
}

} // namespace dtb
