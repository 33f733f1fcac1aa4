#pragma once
// The system's composition as data: which task holds a capability to which kernel object, with
// which rights and badge. kernel/main.cpp registers the objects and creates the tasks, and for
// each task walks this one table (grant()); kernel://composition shows the same table. A row
// whose task does not run on this boot (no disk, no network device, ...) or whose object could
// not be made is skipped: the table says what each task holds whenever both exist.
#include <cstdint>
#include <span>

#include <cap/capability.h>

namespace sched {
struct Task;
}

namespace composition {

// The vector store's worker tasks (vecstore-0, vecstore-1, ...).
constexpr uint8_t kVectorWorkers = 2;

enum class Task : uint8_t { Shell, Storage, McpSerial, McpHttp, Ktest, VectorWorker, Cluster, Count };

enum class Object : uint8_t {
    Factory,       // creates tasks (tool tasks, test tasks)
    Introspection, // reads kernel state; hands out execution tokens for it
    AuditLog,      // the kernel's capability audit log (audit/syscall_log.h)
    Serial,        // the console line
    VectorStore,   // the named vector store
    Disk,          // the block device, when there is one
    AuditTrail,    // the MCP audit trail's region (audit/trail.h)
    Provenance,    // the provenance nodes' region
    NetStack,      // opens UDP endpoints (cluster membership)
    Cluster,       // cluster membership, when configured
    HttpEndpoint,  // the MCP HTTP endpoint's connections
    HttpWake,      // the event the HTTP bridge waits on
    VectorService, // the vector store's request queue (its workers)
    RaftLog,       // the Raft groups' durable state (kernel/raft/raft_store.h)
    Count,
};

struct TaskInfo {
    const char* name; // as kernel_tasks names it; with instances > 1, "name-0", "name-1", ...
    uint8_t instances;
    const char* when; // on which boots the task runs
};

struct ObjectInfo {
    const char* name;
    cap::ObjectType type;
};

struct Grant {
    Task task;
    Object object;
    uint32_t rights; // cap::Rights bits
    uint64_t badge;
};

std::span<const Grant> grants();
const TaskInfo& info(Task task);
const ObjectInfo& info(Object object);

// The objects registered on this boot: their ids, 0 for one there is none of.
class Objects {
public:
    void set(Object object, uint64_t id) { m_ids[static_cast<uint8_t>(object)] = id; }
    uint64_t operator[](Object object) const { return m_ids[static_cast<uint8_t>(object)]; }

private:
    uint64_t m_ids[static_cast<uint8_t>(Object::Count)] = {};
};

// Where in a task's capability table each object it holds landed: ~0u for none.
class Held {
public:
    Held() {
        for (auto& s : m_slots)
            s = ~0u;
    }
    void set(Object object, uint32_t slot) { m_slots[static_cast<uint8_t>(object)] = slot; }
    uint32_t operator[](Object object) const { return m_slots[static_cast<uint8_t>(object)]; }

private:
    uint32_t m_slots[static_cast<uint8_t>(Object::Count)];
};

// Gives `task` (running as `t`) a capability for every row of the table naming it, in the table's
// order, to each of those objects that exists. A grant that fails leaves that object's slot ~0u.
// The caller registers (Objects::set) every object a task holds before granting that task.
Held grant(Task task, sched::Task* t, const Objects& objects);

} // namespace composition
