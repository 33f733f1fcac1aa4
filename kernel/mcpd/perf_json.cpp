#include "perf_json.h"

namespace mcpd {
namespace {

using Stages = mcp::CallStages;

void add_into(Stages::Totals& into, const Stages::Totals& t) {
    into.count += t.count;
    into.sum_ns += t.sum_ns;
    into.max_ns = t.max_ns > into.max_ns ? t.max_ns : into.max_ns;
    for (size_t b = 0; b < Stages::kBuckets; ++b)
        into.buckets[b] += t.buckets[b];
}

// p50/p99 are bucket bounds: within a factor of two of the true quantile (call_stages.h).
void write_totals(json::Writer& w, const Stages::Totals& t) {
    w.begin_object().key("calls").number(t.count).key("total_ns").number(t.sum_ns);
    w.key("mean_ns").number(t.count ? t.sum_ns / t.count : 0).key("max_ns").number(t.max_ns);
    w.key("p50_ns").number(Stages::quantile_ns(t, 50)).key("p99_ns").number(Stages::quantile_ns(t, 99));
    w.end_object();
}

void write_stages(json::Writer& w, const StageSource* sources, size_t count) {
    w.begin_object();
    for (size_t s = 0; s < Stages::kCount; ++s) {
        const auto stage = static_cast<Stages::Stage>(s);
        Stages::Totals sum;
        for (size_t i = 0; i < count; ++i)
            if (sources[i].stages)
                add_into(sum, sources[i].stages->totals(stage));
        w.key(Stages::name(stage));
        write_totals(w, sum);
    }
    w.end_object();
}

} // namespace

void write_perf(json::Writer& w, const StageSource* sources, size_t count) {
    w.key("unit").string("ns");
    w.key("stages");
    write_stages(w, sources, count);
    w.key("transports").begin_object();
    for (size_t i = 0; i < count; ++i) {
        if (!sources[i].stages)
            continue;
        w.key(sources[i].transport);
        write_stages(w, &sources[i], 1);
    }
    w.end_object();
}

} // namespace mcpd
