#pragma once
// No locales in the kernel; libstdc++ headers only need the type to exist.
namespace std {
typedef int* __c_locale;
}
#define _GLIBCXX_C_LOCALE_GNU   0
#define _GLIBCXX_NUM_CATEGORIES 0
