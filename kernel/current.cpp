#include "current.h"

namespace {
const char* g_name = "boot";
}

const char* current_task_name() { return g_name; }
void set_current_task_name(const char* name) { g_name = name; }
