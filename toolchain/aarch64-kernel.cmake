# Toolchain for the freestanding AArch64 kernel: Debian's aarch64-linux-gnu GCC with picolibc.
# glibc's /usr/aarch64-linux-gnu/include must never be seen by kernel code, hence -nostdinc
# and an explicit include order: shims -> libstdc++ -> picolibc -> GCC's own headers.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(BASALT_KERNEL_BUILD ON CACHE BOOL "" FORCE)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_OBJCOPY aarch64-linux-gnu-objcopy CACHE FILEPATH "")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(_gcc_ver 12)
set(_picolibc /usr/lib/picolibc/aarch64-linux-gnu)
set(_cxx_inc /usr/aarch64-linux-gnu/include/c++/${_gcc_ver})
set(_gcc_inc /usr/lib/gcc-cross/aarch64-linux-gnu/${_gcc_ver}/include)
set(BASALT_LIBGCC /usr/lib/gcc-cross/aarch64-linux-gnu/${_gcc_ver}/libgcc.a CACHE FILEPATH "")
# The release build of picolibc (optimised for speed): the default one is built for size, and its
# memcpy, memset and memmove copy a byte per loop (a third of the kernel's time in an HTTP ping).
set(BASALT_PICOLIBC_LIB ${_picolibc}/lib/release)

set(_inc "-nostdinc -isystem ${CMAKE_CURRENT_LIST_DIR}/shim -isystem ${_cxx_inc} -isystem ${_cxx_inc}/aarch64-linux-gnu -isystem ${_picolibc}/include -isystem ${_gcc_inc}")
# -mno-outline-atomics: outline atomics call libgcc helpers that need getauxval (no Linux here).
# Frame pointers are kept for the panic backtrace.
set(_common "-ffreestanding -mno-outline-atomics -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-stack-protector -fstack-clash-protection --param=stack-clash-protection-guard-size=12 -fno-pic -fno-pie -ffunction-sections -fdata-sections -D_GLIBCXX_ATOMIC_WAIT_H -D__BASALT_KERNEL__=1 ${_inc}")
set(CMAKE_C_FLAGS_INIT "${_common}")
set(CMAKE_CXX_FLAGS_INIT "${_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit -fno-asynchronous-unwind-tables")
set(CMAKE_ASM_FLAGS_INIT "${_inc}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -no-pie -Wl,--gc-sections -Wl,--build-id=none")
