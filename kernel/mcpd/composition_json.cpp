#include "composition_json.h"

#include <cap/rights.h>
#include "../composition.h"

namespace mcpd {
namespace {

// Calls fn(name) for each task a table task stands for: "vecstore-0", "vecstore-1", ... when it
// has several instances (at most 10: one digit).
template <typename Fn>
void for_each_instance(composition::Task task, Fn fn) {
    const composition::TaskInfo& t = composition::info(task);
    if (t.instances <= 1) {
        fn(std::string_view(t.name));
        return;
    }
    char name[40];
    size_t n = 0;
    while (t.name[n] && n + 2 < sizeof name) {
        name[n] = t.name[n];
        ++n;
    }
    name[n] = '-';
    for (uint8_t i = 0; i < t.instances && i < 10; ++i) {
        name[n + 1] = static_cast<char>('0' + i);
        fn(std::string_view(name, n + 2));
    }
}

} // namespace

void write_composition(json::Writer& w) {
    using composition::Task;
    w.key("tasks").begin_array();
    for (uint8_t k = 0; k < static_cast<uint8_t>(Task::Count); ++k) {
        const Task task = static_cast<Task>(k);
        for_each_instance(task, [&](std::string_view name) {
            w.begin_object().key("task").string(name).key("when").string(composition::info(task).when).end_object();
        });
    }
    w.end_array();
    w.key("grants").begin_array();
    for (const composition::Grant& g : composition::grants()) {
        const composition::ObjectInfo& o = composition::info(g.object);
        for_each_instance(g.task, [&](std::string_view name) {
            w.begin_object().key("task").string(name).key("object").string(o.name);
            w.key("type").string(cap::type_name(o.type)).key("rights").begin_array();
            for (uint32_t b = 0; b < cap::kRightCount; ++b)
                if (g.rights & (1u << b))
                    w.string(cap::kRightNames[b]);
            w.end_array().key("badge").number(g.badge).end_object();
        });
    }
    w.end_array();
}

} // namespace mcpd
