#include "tokenizer.h"

namespace text {

bool is_token(std::string_view word) {
    if (word.empty() || word.size() > kMaxTokenBytes)
        return false;
    size_t n = 0;
    bool same = false;
    for_each_token(word, [&](std::string_view t) {
        same = ++n == 1 && t == word;
        return true;
    });
    return same && n == 1;
}

size_t token_count(std::string_view text) {
    return for_each_token(text, [](std::string_view) { return true; });
}

} // namespace text
