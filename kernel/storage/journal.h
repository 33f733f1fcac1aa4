#pragma once
// The journal: where the vector store's changes wait to become durable. System calls and the
// vector service stage encoded records here (exception context, a copy and nothing else); the
// storage task, the only holder of the disk, takes everything staged as one group, writes it to
// the write-ahead log with one flush (group commit), and reports back. Each caller stays blocked
// until the group carrying its record is durable: it is answered only then.
//
// States: Off (no disk: every collection lives in memory), Recovering (the storage task replays
// the log; nobody else may touch the store), Ready, Failed (a commit failed: what is in memory is
// ahead of the disk, so durable collections refuse writes until a restart; reads go on).
#include <cstddef>
#include <cstdint>
#include <span>

#include <abi/storage.h>
#include <ktl/result.h>
#include <storage/records.h>

#include "../ipc/sync.h"
#include "../sched/task.h"

namespace journal {

using State = abi::StorageState; // storage_info reports it to tasks (abi/storage.h)

// The storage task's priority once the audit trail is back and until recovery ends: below the tool
// tasks (15), the bridges (16) and the network (17), which answer meanwhile; what it hands the
// vector workers runs no higher (vector::kForegroundPriority). Its own comes back when it is done:
// from then on it writes the log, which callers wait for.
constexpr uint8_t kRecoveryPriority = 12;

constexpr size_t kStagingBytes = 512 * 1024;
constexpr size_t kMaxRecord = 256 * 1024; // one record at most (a vector tool's chunk is 16 KiB)
constexpr size_t kStagedHeader = 8;       // u16 type, u16 0, u32 length; payload padded to 8
constexpr uint32_t kMaxAcks = 320;        // the vector service's 256 requests, creates and drops

// Boot: no disk (`why` says so), or a disk the storage task `owner` is about to recover. The
// owner recovers the audit trail at the priority it was created with (below the bridges', so that
// they answer what needs no store meanwhile), the store at kRecoveryPriority (from audit_ready:
// below the tool tasks, which serve everything else by then), and runs at `serving_priority`
// once recovery has ended (open, or fail).
void init_off(const char* why);
void init_recovering(sched::Task* owner, uint8_t serving_priority);

State state();
const char* state_name(State s);
const char* reason(); // why Off or Failed ("" otherwise)
// True while the storage task itself replays the log: its calls change the store without logging.
bool replaying();
bool replaying_for(const sched::Task* caller); // the same for a blocked caller (a worker finishing its request)
// Whether a new collection should be durable (a disk is attached and working).
bool durable_by_default();

// Room for a record of `bytes` (payload): None, NoSpace (the log is out of room: storage_full),
// IoError (the journal failed), WouldBlock (the staging buffer is full until the storage task
// takes it), InvalidArgs (larger than kMaxRecord). A reservation is either staged or given back.
ktl::Error reserve(size_t bytes);
// The same for a Raft member's record (storage::RecordType::RaftTerm...): also taken while the
// store is still recovered once the audit trail is back (written when the log opens), and held
// back by a checkpoint like every change (WouldBlock).
ktl::Error reserve_raft(size_t bytes);
// The same for a drop, which may use a reserve kept back from everything else: on a full disk a
// collection can still be dropped, and the checkpoint after it gives the room back.
ktl::Error reserve_drop(size_t bytes);
void unreserve(size_t bytes);
// Space for a record of exactly `bytes` made by a reservation of `reserved` >= bytes (the rest is
// given back), to encode into before the next call; the commit number that will carry it comes
// back in `ticket`. Empty when the journal failed meanwhile: the caller answers -IoError.
// linger: a record that may wait for company (a change by a task with abi::kTaskAckStaged, whose
// creator stages the call's audit record and syncs right after; an audit record nobody waits
// for): the storage task is not woken for it, so that one commit carries a change and its record,
// and read-only calls' records share commits. A sync, a record that may not wait, or 20 ms after
// the group's first record ends the wait.
std::span<std::byte> stage(storage::RecordType type, size_t bytes, size_t reserved, uint64_t& ticket,
                           bool linger = false);

// Wakes the task blocked on `wq` with `result` once commit `ticket` is durable (with -IoError if
// it fails), then frees `heap` (kheap; may be null). A task with abi::kTaskAckStaged is woken at
// once (but for an import's checkpoint ticket): its creator calls sync() before it acknowledges.
void defer(sched::WaitQueue& wq, int64_t result, void* heap, uint64_t ticket);
// Blocks the calling task until commit `ticket` is durable; it then gets `result`.
ipc::Outcome wait(uint64_t ticket, int64_t result);
// Blocks the calling task until the audit trail's records are back (the first thing recovery
// does; the bridges serve from then on while the store is still recovered; returns at once otherwise).
ipc::Outcome wait_ready();

// The MCP audit trail's region: every record appended to it is staged too (no caller waits for
// it: it becomes durable with the next group).
void set_audit_region(const void* region);
bool is_audit_region(const void* region);
void stage_audit(const void* record, size_t len);
// Blocks the calling task until everything staged so far is durable (at once when nothing is, or
// there is no disk): a bridge calls it before answering a call that changed something, so the
// change (staged by its tool task, abi::kTaskAckStaged) and its audit record are on the disk.
// -IoError (at once, or when the commit fails): the journal failed at or after `since_ns`
// (monotonic: when the caller's call began), so what the call staged may be lost. A journal that
// failed before then staged nothing of it (a failed journal stages nothing): 0.
ipc::Outcome sync(uint64_t since_ns);
// sync() for a caller that may not block (a bridge answering other calls meanwhile): 0 when
// everything staged so far is durable (or nothing is logged), -IoError as sync(), or the commit
// ticket that will carry it (> 0), which durable() then answers for. The storage task is woken to
// write it, and the commit listeners are called once it is written or the journal fails.
int64_t barrier(uint64_t since_ns);
// 1: commit `ticket` (from barrier) is durable; 0: not yet; -IoError: the journal failed first.
int64_t durable(uint64_t ticket);
// A bridge's wake-up (safe from any context), called when a commit a barrier ticket may be
// waiting for is written or fails (two at most: the serial line's and HTTP's).
void add_commit_listener(void (*wake)());

// Checkpoints (the storage task takes them; see storage_task.h). An import is durable only once a
// checkpoint holds its snapshot: note_import() asks for one, and the import's answer waits for the
// ticket take_import_ticket() hands out (called right after, in the same exception context).
void request_checkpoint();
void note_import();
uint64_t take_import_ticket();
// The audit trail's region: records appended this boot (replayed ones included).
uint64_t audit_total();

using abi::CheckpointStep; // the storage task names the steps (abi/storage.h)
int64_t checkpoint_step(CheckpointStep step, int64_t status, uint64_t log_free);
// Whether a checkpoint is being taken (between Begin and Done): a durable collection is not
// dropped meanwhile (its drop waits), so that what the checkpoint holds and the drop agree.
bool checkpoint_in_progress();

// --- the storage task ---
// Copies every staged record into out (cap bytes, at least kStagingBytes) and makes them the
// group in flight; returns the byte count, or blocks until something is staged (deadline).
ipc::Outcome take(std::byte* out, size_t cap, uint64_t deadline_ns);
// The group in flight is durable (status 0) or failed (-error: the journal fails). log_free: bytes
// the log has left. `wake` is called when staging space was freed (the vector service re-runs
// writes that waited for it).
void done(int64_t status, uint64_t log_free);
// Recovery put the audit trail back (the store comes next, at kRecoveryPriority); log_free: the
// room the log has left, which the audit records staged from now on (the bridges serve) count against.
void audit_ready(uint64_t log_free);
void open(uint64_t log_free); // recovery ended: Ready
void fail(const char* why);   // recovery or a commit failed
void set_space_waker(void (*wake)());

struct Stats {
    State state;
    uint64_t commits;         // groups made durable
    uint64_t records;         // records made durable
    uint64_t bytes;           // payload bytes made durable
    uint64_t waiters_max;     // most callers answered by one group
    uint64_t refused_full;    // reservations refused: the log was full
    uint64_t log_free;        // bytes the log had left at the last commit
    uint64_t last_commit_ns;  // how long the last group took (write and flush)
    uint64_t commit_ns_total; // all groups' (their mean: commit_ns_total / commits)
    uint32_t staged_bytes;
    uint32_t pending_acks;
    uint64_t checkpoints;  // checkpoints written this boot
    uint64_t audit_staged; // audit records sent to the disk
    uint64_t audit_lost;   // audit records the disk could not take (full, failed)
};
Stats stats();
void note_commit_time(uint64_t ns);

} // namespace journal
