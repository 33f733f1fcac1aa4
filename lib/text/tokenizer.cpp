#include "tokenizer.h"

namespace text {

size_t token_count(std::string_view text) {
    return for_each_token(text, [](std::string_view) { return true; });
}

} // namespace text
