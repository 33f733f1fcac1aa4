#include "provenance_log.h"
#include "../ipc/task_slots.h"

#include "../arch/aarch64/cpu.h"
#include "../clock.h"
#include <abi/sys.h>

#include <ktl/civil_time.h>
#include <ktl/utf8.h>
#include <mcp/policy/roles.h>

namespace mcpd {
namespace {

constexpr uint64_t kRegionBytes = 1u << 20;

// Only this boot reads the ring (it is not on the disk): its layout is free to change.
struct NodeRecord {
    uint64_t id;
    uint64_t parent;
    uint64_t mono_ns;
    int64_t created_unix; // wall-clock seconds, when wall_known; formatted as created_at when read
    char request_id[48];
    char principal[32];
    char client_name[32];
    char client_version[16];
    char method[24];
    char transport[8];
    uint32_t session;
    uint8_t role;
    uint8_t integrity;
    uint8_t wall_known; // the wall clock was set when the node was made ("unknown" otherwise)
    uint8_t pad[57];
};
static_assert(sizeof(NodeRecord) == 256);

ipc::TaskSlots g_slots;
uint64_t g_count = 0; // nodes written (node number n is record n - 1)
uint64_t g_failed = 0;
volatile uint32_t g_tag = 0;

uint64_t capacity() { return kRegionBytes / sizeof(NodeRecord); }
uint64_t given_way() { return g_count > capacity() ? g_count - capacity() : 0; }


// Drawn once, by the first bridge to keep a node: nonzero, so that no id is ever 0.
uint32_t boot_tag() {
    if (g_tag)
        return g_tag;
    uint32_t tag = 0;
    if (sys::random_bytes(&tag, sizeof tag) != int64_t(sizeof tag) || !tag)
        tag = static_cast<uint32_t>(clock::monotonic_ns()) | 1;
    arch::IrqGuard guard;
    if (!g_tag)
        g_tag = tag;
    return g_tag;
}

bool read(uint64_t id, NodeRecord& out, const char*& why) {
    const uint64_t number = mcp::provenance_number(id);
    if (mcp::provenance_boot(id) != g_tag || g_tag == 0) {
        why = "the node is of another boot: this one keeps only its own";
        return false;
    }
    if (number == 0 || number > g_count) {
        why = "no such node";
        return false;
    }
    if (number - 1 < given_way()) {
        why = "the node has given way to newer ones (the ring holds 4096)";
        return false;
    }
    if (sys::region_read(g_slots.slot(), (number - 1) * sizeof(NodeRecord), &out, sizeof out) != int64_t(sizeof out)) {
        why = "the provenance ring could not be read";
        return false;
    }
    return true;
}

void write_node(json::Writer& w, const NodeRecord& r) {
    char id[mcp::kProvenanceIdText], parent[mcp::kProvenanceIdText];
    mcp::format_provenance_id(r.id, id);
    mcp::format_provenance_id(r.parent, parent);
    w.begin_object().key("id").string(id).key("parent").string(parent);
    w.key("integrity").string(mcp::integrity_name(static_cast<mcp::Integrity>(r.integrity)));
    char created[ktl::kRfc3339Len + 1] = "unknown"; // clock::rfc3339_now's text for the same second
    if (r.wall_known)
        ktl::format_rfc3339(r.created_unix, created, sizeof created);
    w.key("created_at").string(created);
    w.key("principal").string(ktl::field_text(r.principal));
    w.key("role").string(mcp::role_name(static_cast<mcp::Role>(r.role)));
    w.key("transport").string(ktl::field_text(r.transport)).key("session").number(uint64_t(r.session));
    w.key("client").begin_object().key("name").string(ktl::field_text(r.client_name));
    w.key("version").string(ktl::field_text(r.client_version)).end_object();
    w.key("request_id").string(ktl::field_text(r.request_id));
    w.key("method").string(ktl::field_text(r.method)).end_object();
}

} // namespace

uint64_t provenance_log_bytes() { return kRegionBytes; }
uint32_t provenance_log_record_bytes() { return sizeof(NodeRecord); }
bool provenance_log_attach(uint32_t region) { return g_slots.attach(region); }
uint64_t provenance_log_count() { return g_count; }
uint64_t provenance_log_failed() { return g_failed; }
uint32_t provenance_boot_tag() { return g_tag; }

uint64_t provenance_log_record(const mcp::ProvenanceNode& n) { return provenance_log_record(n, g_slots.slot()); }

uint64_t provenance_log_record(const mcp::ProvenanceNode& n, uint32_t slot) {
    const uint32_t tag = boot_tag();
    NodeRecord r {};
    r.parent = n.parent;
    r.mono_ns = clock::monotonic_ns();
    r.wall_known = clock::wall_clock_known();
    r.created_unix = clock::unix_seconds();
    ktl::utf8_copy(r.request_id, n.request_id);
    ktl::utf8_copy(r.principal, n.principal ? std::string_view(n.principal->name) : "anonymous");
    ktl::utf8_copy(r.client_name, n.client_name);
    ktl::utf8_copy(r.client_version, n.client_version);
    ktl::utf8_copy(r.method, n.method);
    ktl::utf8_copy(r.transport, n.transport ? n.transport : "");
    r.session = n.session;
    r.role = static_cast<uint8_t>(n.principal ? n.principal->role : mcp::Role::Anonymous);
    r.integrity = static_cast<uint8_t>(n.integrity);
    arch::IrqGuard guard;           // two bridges keep nodes at once: numbers and the ring stay in step
    if (g_count >= 0xffffffffull) { // a 32-bit number per boot
        ++g_failed;
        return 0;
    }
    r.id = mcp::make_provenance_id(tag, static_cast<uint32_t>(g_count + 1));
    if (slot == ipc::TaskSlots::kNone || sys::region_append(slot, &r, sizeof r) < 0) {
        ++g_failed;
        return 0;
    }
    ++g_count;
    return r.id;
}

bool provenance_log_write(json::Writer& w, uint64_t id, uint32_t depth, const char*& why) {
    NodeRecord r;
    if (!read(id, r, why))
        return false;
    w.key("node");
    write_node(w, r);
    // The chain: each parent in turn, as far as it is held (a parent that gave way ends it).
    w.key("chain").begin_array();
    for (uint32_t i = 1; i < depth && r.parent; ++i) {
        const char* ignored = nullptr;
        uint64_t parent = r.parent;
        if (!read(parent, r, ignored))
            break;
        write_node(w, r);
    }
    w.end_array();
    return true;
}

} // namespace mcpd
