#include "composition.h"

#include "cap/kcap.h"

namespace composition {
namespace {

using enum Object;
using kcap::kAll, kcap::kCreate, kcap::kDrop, kcap::kGrant, kcap::kImport, kcap::kRead, kcap::kWrite;

// Indexed by Task.
constexpr TaskInfo kTasks[] = {
    { "shell", 1, "the console line is the owner's shell (no mcp_serial)" },
    { "storage", 1, "a disk is attached" },
    { "mcp-serial", 1, "mcp_serial: the console line carries MCP" },
    { "mcp-http", 1, "a network device and http_port" },
    { "ktest", 1, "ktest= names tests to run" },
    { "vecstore", kVectorWorkers, "always" },
    { "cluster", 1, "cluster= with a key and a network device" },
};
static_assert(sizeof kTasks / sizeof kTasks[0] == static_cast<uint8_t>(Task::Count));

// Indexed by Object.
constexpr ObjectInfo kObjects[] = {
    { "factory", cap::ObjectType::Factory },
    { "introspection", cap::ObjectType::Introspection },
    { "audit_log", cap::ObjectType::AuditLog },
    { "serial", cap::ObjectType::Device },
    { "vector_store", cap::ObjectType::VectorStore },
    { "disk", cap::ObjectType::Disk },
    { "audit_trail", cap::ObjectType::Region },
    { "provenance", cap::ObjectType::Region },
    { "netstack", cap::ObjectType::NetStack },
    { "cluster", cap::ObjectType::Cluster },
    { "http_endpoint", cap::ObjectType::NetEndpoint },
    { "http_wake", cap::ObjectType::Event },
    { "vector_service", cap::ObjectType::VectorService },
    { "raft_log", cap::ObjectType::RaftLog },
};
static_assert(sizeof kObjects / sizeof kObjects[0] == static_cast<uint8_t>(Object::Count));

// Each task's rows in the order it is granted them (which decides its slot numbers).
constexpr Grant kGrants[] = {
    // The disk is the storage task's alone; the store's rights are what replaying the log needs;
    // the trail's region is read for checkpoints and written when recovery puts records back.
    { Task::Storage, Disk, kRead | kWrite, 0 },
    { Task::Storage, VectorStore, kRead | kWrite | kGrant | kCreate | kDrop | kImport, 0 },
    { Task::Storage, AuditTrail, kRead | kWrite, 0 },
    // The Raft groups' state: given back by recovery (write), read whole for checkpoints.
    { Task::Storage, RaftLog, kRead | kWrite, 0 },
    // Membership opens its UDP endpoint at run time; refused peers go to the MCP audit trail.
    { Task::Cluster, NetStack, kWrite, 0 },
    { Task::Cluster, AuditTrail, kWrite, 0 },
    // Its consensus group's member keeps its term, vote and log there.
    { Task::Cluster, RaftLog, kRead | kWrite, 0 },
    // The group's replicated collections: a voter applies each committed change to its store
    // (create, drop, and writes through the collection it opens for one change), and imports those
    // an installed snapshot covers from another voter.
    { Task::Cluster, VectorStore, kRead | kWrite | kGrant | kCreate | kDrop | kImport, 0 },
    // A voter exports a replicated collection whole into a region for another catching up.
    { Task::Cluster, Factory, kWrite, 0 },
    // The console line's MCP bridge: the line, then what every bridge holds. Grant on the
    // introspection object and the store: the bridge hands tool tasks single-use tokens for
    // them (one collection, through store_open, or the store), never the capabilities.
    { Task::McpSerial, Serial, kRead | kWrite, 0 },
    { Task::McpSerial, Introspection, kRead | kGrant, 0 },
    { Task::McpSerial, Factory, kWrite, 0 },
    { Task::McpSerial, AuditLog, kRead, 0 },
    { Task::McpSerial, AuditTrail, kRead | kWrite, 0 },
    { Task::McpSerial, Provenance, kRead | kWrite, 0 },
    { Task::McpSerial, VectorStore, kAll, 0 },
    { Task::McpSerial, Cluster, kRead | kWrite | kGrant, 0 },
    // Otherwise the console line is the appliance owner's seat: the shell.
    { Task::Shell, Factory, kWrite | kGrant, 0 },
    { Task::Shell, Introspection, kRead | kGrant, 0 },
    { Task::Shell, AuditLog, kRead, 0 },
    { Task::Shell, Serial, kRead | kWrite, 0 },
    // The HTTP bridge reaches its connections only through the endpoint; then what every bridge holds.
    { Task::McpHttp, HttpEndpoint, kRead | kWrite, 0 },
    { Task::McpHttp, HttpWake, kRead, 0 },
    { Task::McpHttp, Introspection, kRead | kGrant, 0 },
    { Task::McpHttp, Factory, kWrite, 0 },
    { Task::McpHttp, AuditLog, kRead, 0 },
    { Task::McpHttp, AuditTrail, kRead | kWrite, 0 },
    { Task::McpHttp, Provenance, kRead | kWrite, 0 },
    { Task::McpHttp, VectorStore, kAll, 0 },
    { Task::McpHttp, Cluster, kRead | kWrite | kGrant, 0 },
    // The in-kernel test runner.
    { Task::Ktest, Factory, kWrite | kGrant, 0 },
    { Task::Ktest, Introspection, kRead | kGrant, 0 },
    { Task::Ktest, AuditLog, kRead, 0 },
    { Task::Ktest, VectorStore, kAll, 0 },
    // The vector store's workers serve vec_* requests.
    { Task::VectorWorker, VectorService, kWrite, 0 },
};

} // namespace

std::span<const Grant> grants() { return kGrants; }
const TaskInfo& info(Task task) { return kTasks[static_cast<uint8_t>(task)]; }
const ObjectInfo& info(Object object) { return kObjects[static_cast<uint8_t>(object)]; }

Held grant(Task task, sched::Task* t, const Objects& objects) {
    Held held;
    for (const Grant& g : kGrants)
        if (g.task == task && objects[g.object] != 0)
            held.set(g.object, kcap::grant_existing(t, objects[g.object], g.rights, g.badge).value_or(~0u));
    return held;
}

} // namespace composition
