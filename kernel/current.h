#pragma once
#include <cstdint>
// Name of the task running on this CPU, for fault reports. Until the scheduler exists there is
// one flow of control, named at each boot phase.
const char* current_task_name();
void set_current_task_name(const char* name);
