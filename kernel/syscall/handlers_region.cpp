// Memory-region system calls: regions are pages from the page allocator, charged to the
// creating task, governed by an mm::Region policy.
#include "../mm/kheap.h"
#include "../mm/pmm.h"
#include "../sched/scheduler.h"
#include "buffers.h"
#include "handlers.h"
#include "../storage/journal.h"

#include <mm/region.h>

#include <new>

namespace handlers {
namespace {

constexpr uint64_t kMaxRegion = 16u << 20;

struct KernelRegion {
    mm::Region region;
    uint64_t pages = 0;
    unsigned order = 0;
};

int64_t err(ktl::Error e) { return -static_cast<int64_t>(e); }
mm::Region& region_of(const kcap::Resolved& o) { return static_cast<KernelRegion*>(o.object)->region; }

} // namespace

ktl::Result<void*> make_region(uint64_t size, uint64_t policy, uint64_t object_size, bool kernel_owned) {
    if (size == 0 || size > kMaxRegion || policy > 3 || object_size > size)
        return ktl::Error::InvalidArgs;
    const unsigned order = pmm::order_for(size);
    const sched::Task* self = sched::started() ? sched::current() : nullptr;
    auto owner = static_cast<uint16_t>(kernel_owned || !self ? 0 : self->id);
    auto pages = pmm::alloc_pages(order, owner);
    if (!pages)
        return pages.error();
    std::span<std::byte> memory(reinterpret_cast<std::byte*>(*pages), 4096ull << order);
    auto region = mm::Region::create(memory.first(size), static_cast<mm::RegionPolicy>(policy),
                                     static_cast<uint32_t>(object_size));
    auto mem = kernel_owned ? kheap::alloc_for(kheap::Owner::Kernel, sizeof(KernelRegion))
                            : kheap::alloc(sizeof(KernelRegion));
    if (!region || !mem) {
        pmm::free_pages(*pages, order);
        if (mem)
            kheap::free(*mem);
        return !region ? region.error() : mem.error();
    }
    return static_cast<void*>(new (*mem) KernelRegion { *region, *pages, order });
}

int64_t region_create(const kcap::Resolved&, Cap, uint64_t bytes, uint64_t policy, uint64_t object_size) {
    sched::Task* self = sched::current();
    auto kr = make_region(bytes, policy, object_size, false);
    if (!kr)
        return err(kr.error());
    auto slot = kcap::create_owned_and_grant(self, kcap::ObjectType::Region, *kr,
                                             kcap::kRead | kcap::kWrite | kcap::kGrant | kcap::kRevoke);
    if (!slot) {
        destroy_region(*kr);
        return err(slot.error());
    }
    return *slot;
}

void destroy_region(void* object) {
    auto* kr = static_cast<KernelRegion*>(object);
    pmm::free_pages(kr->pages, kr->order);
    kr->~KernelRegion();
    kheap::free(kr);
}

int64_t region_write(const kcap::Resolved& o, Cap, uint64_t offset, const void* data, uint64_t len) {
    if (len && !buffers::readable(data, len))
        return err(ktl::Error::InvalidArgs);
    auto r = region_of(o).write(offset, { static_cast<const std::byte*>(data), len });
    return r ? 0 : err(r.error());
}

int64_t region_append(const kcap::Resolved& o, Cap, const void* data, uint64_t len) {
    if (len && !buffers::readable(data, len))
        return err(ktl::Error::InvalidArgs);
    auto r = region_of(o).append({ static_cast<const std::byte*>(data), len });
    if (r && journal::is_audit_region(o.object))
        journal::stage_audit(data, len); // the trail goes to the disk too
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t region_seal(const kcap::Resolved& o, Cap) {
    auto r = region_of(o).seal();
    return r ? 0 : err(r.error());
}

int64_t region_read(const kcap::Resolved& o, Cap, uint64_t offset, void* out, uint64_t len) {
    if (len && !buffers::writable(out, len))
        return err(ktl::Error::InvalidArgs);
    auto r = region_of(o).read(offset, { static_cast<std::byte*>(out), len });
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t region_alloc(const kcap::Resolved& o, Cap) {
    auto r = region_of(o).alloc_object();
    return r ? static_cast<int64_t>(*r) : err(r.error());
}

int64_t region_free(const kcap::Resolved& o, Cap, uint32_t index) {
    auto r = region_of(o).free_object(index);
    return r ? 0 : err(r.error());
}

} // namespace handlers
