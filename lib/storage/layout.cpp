#include "layout.h"

namespace storage {

Extent next_checkpoint_area(uint64_t log_end, uint64_t disk_sectors, Extent live) {
    if (disk_sectors <= log_end)
        return {};
    const uint64_t half = (disk_sectors - log_end) / 2;
    const Extent halves[2] = { { log_end, half }, { log_end + half, half } };
    if (live.sectors == 0)
        return halves[0];
    // The half the current checkpoint does not start in (plain alternation), if it is clear of it;
    // then the other half; then the larger gap before or after it.
    const int other = live.first >= halves[1].first ? 0 : 1;
    if (!halves[other].overlaps(live))
        return halves[other];
    if (!halves[1 - other].overlaps(live))
        return halves[1 - other];
    const Extent before { log_end, live.first > log_end ? live.first - log_end : 0 };
    const Extent after { live.end(), live.end() < disk_sectors ? disk_sectors - live.end() : 0 };
    return after.sectors >= before.sectors ? after : before;
}

} // namespace storage
