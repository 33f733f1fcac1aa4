#pragma once
// libstdc++'s aarch64-linux-gnu configuration includes <features.h> (a glibc header).
// picolibc has sys/features.h; glibc version checks are all false here.
#include <sys/features.h>
#ifndef __GLIBC_PREREQ
#    define __GLIBC_PREREQ(maj, min) 0
#endif
