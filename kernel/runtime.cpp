// C++ and picolibc runtime pieces a freestanding kernel must supply itself.
#include "current.h"
#include "mm/kheap.h"
#include "panic.h"

#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" {
void* __dso_handle = nullptr;

void __cxa_pure_virtual() { panic("pure virtual function called"); }
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; } // kernel objects are never destroyed
void abort() { panic("abort() called"); }
void _exit(int status) { panic("_exit(%d) called", status); }
}

// operator new serves from the kernel heap, charged to the running task. The kernel allocates
// nothing before the heap is up; if something tries, that is a bug worth a panic. The throwing
// forms panic on exhaustion (exceptions are disabled); the nothrow forms return null.
static void* heap_alloc(size_t size) {
    if (!kheap::ready())
        panic("operator new before the kernel heap is initialised");
    auto r = kheap::alloc(size ? size : 1);
    return r ? *r : nullptr;
}

void* operator new(size_t size) {
    void* p = heap_alloc(size);
    if (!p)
        panic("operator new: out of memory (%zu bytes)", size);
    return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return heap_alloc(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return heap_alloc(size); }
void operator delete(void* p) noexcept { kheap::free(p); }
void operator delete[](void* p) noexcept { kheap::free(p); }
void operator delete(void* p, size_t) noexcept { kheap::free(p); }
void operator delete[](void* p, size_t) noexcept { kheap::free(p); }

namespace std {
void __throw_bad_alloc() { panic("std::bad_alloc"); }
void __throw_length_error(const char* what) { panic("std::length_error: %s", what); }
void __throw_out_of_range(const char* what) { panic("std::out_of_range: %s", what); }
void __throw_out_of_range_fmt(const char* what, ...) { panic("std::out_of_range: %s", what); }
void __throw_logic_error(const char* what) { panic("std::logic_error: %s", what); }
void __throw_invalid_argument(const char* what) { panic("std::invalid_argument: %s", what); }
void __throw_bad_function_call() { panic("std::bad_function_call"); }
void __throw_bad_optional_access() { panic("std::bad_optional_access"); }
void __throw_bad_variant_access(const char* what) { panic("std::bad_variant_access: %s", what); }
void __throw_bad_array_new_length() { panic("std::bad_array_new_length"); }
} // namespace std
