// The journal as the vector service sees it (vector/durability.h): the one place where the store
// reaches into the storage layer, so that vector/ needs nothing of storage/.
#include "../vector/durability.h"
#include "journal.h"

namespace vector::durability {

bool replaying() { return journal::replaying(); }
bool recovering() { return journal::state() == journal::State::Recovering; }
bool checkpointing() { return journal::checkpoint_in_progress(); }
ktl::Error reserve(size_t bytes) { return journal::reserve(bytes); }
void unreserve(size_t bytes) { journal::unreserve(bytes); }

std::span<std::byte> stage(storage::RecordType type, size_t bytes, size_t reserved, uint64_t& ticket,
                           const sched::Task* caller) {
    return journal::stage(type, bytes, reserved, ticket, caller && caller->ack_staged);
}

void defer(sched::WaitQueue& caller, int64_t result, void* heap, uint64_t ticket) {
    journal::defer(caller, result, heap, ticket);
}

uint64_t take_import_ticket() { return journal::take_import_ticket(); }

} // namespace vector::durability
