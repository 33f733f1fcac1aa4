/* What upstream's tracing.c and the C runtime would give Raft's engine, for a freestanding build:
 * no clock, no environment, no stderr. Tracing is off (a raft instance's tracer is set to NULL by
 * its owner, which skips the formatting too); these tracers exist because raft_init() names one. */
#include <stdbool.h>
#include <stddef.h>

#include "tracing.h"

static void basalt_raft_trace_nothing(struct raft_tracer* t, int type, const void* info) {
    (void)t;
    (void)type;
    (void)info;
}

struct raft_tracer NoopTracer = { .impl = NULL, .version = 2, .emit = basalt_raft_trace_nothing };
struct raft_tracer StderrTracer = { .impl = NULL, .version = 2, .emit = basalt_raft_trace_nothing };

void raft_tracer_maybe_enable(struct raft_tracer* tracer, bool enabled) {
    (void)tracer;
    (void)enabled;
}

#if defined(__BASALT_KERNEL__)
/* convert.c compares the program's name with dqlite's unit-test binary ("unit-test"). */
char* __progname = "basalt";
#endif
