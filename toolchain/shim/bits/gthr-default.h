#pragma once
// No threads library in the kernel: libstdc++ sees the single-threaded gthreads model.
#include <bits/gthr-single.h>
