#pragma once
// Where the next checkpoint goes. The disk past the log holds two checkpoint areas, halves of what
// is left; checkpoints alternate between them so the current one is never written over. The halves
// are computed from the disk's size *now*, and a user grows an image when it is full, so the
// current checkpoint may sit where the old halves were: the choice is made against the current
// checkpoint's own extent (which the superblock records), never against where it "should" be.
// Once the disk has grown, the next checkpoint uses the larger halves as soon as one of them is
// clear of the current checkpoint; until then the larger of the two gaps around it.
#include <cstdint>

namespace storage {

struct Extent {
    uint64_t first = 0;
    uint64_t sectors = 0;
    uint64_t end() const { return first + sectors; }
    bool overlaps(const Extent& o) const { return sectors && o.sectors && first < o.end() && o.first < end(); }
};

// log_end: the first sector after the log; disk_sectors: the disk's size; live: the current
// checkpoint's extent (sectors 0: none yet). The area returned never overlaps `live`; its size 0
// when there is no room at all.
Extent next_checkpoint_area(uint64_t log_end, uint64_t disk_sectors, Extent live);

} // namespace storage
