#pragma once
// The console's seat at the sink policy. A destructive call from a client that cannot be asked
// becomes a proposal that needs a human's yes; a person at the console (QEMU's stdio, a board's
// UART: physical presence) is such a human, and on an appliance with one administrator the only
// one. The shell posts a decision on a proposal here; the HTTP bridge takes it and makes it a
// proposal_approve / proposal_reject tools/call of a session of its own whose principal is the
// console's, so it passes the same dispatcher, proposal book (four eyes: the console is not the
// proposer), sink policy and audit trail as an MCP approval, and the approved call runs under a
// provenance node of its own whose parent is the proposing request's. The outcome comes back as
// one line. One decision at a time; nothing here allocates.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mcpd::console_desk {

enum class Verb : uint8_t { Approve, Reject };
enum class Posted : uint8_t { Ok, NoBridge, Busy };

// The shell: hands a decision to the bridge. NoBridge: no bridge takes console decisions (no
// network, or MCP is on the serial line); Busy: the previous one is still being carried out.
Posted post(Verb verb, uint32_t id);
// The shell: true once the posted decision is answered, its line copied into out (cut to cap).
bool outcome(char* out, size_t cap);
// The shell, when it stops waiting: the answer, whenever it comes, goes to the kernel log.
void abandon();

// The bridge: it takes console decisions from now on; `wake` brings its loop round.
void open(void (*wake)());
// The bridge: the decision waiting, if any (then in hand until answered).
bool take(Verb& verb, uint32_t& id);
void answer(std::string_view line);

} // namespace mcpd::console_desk
