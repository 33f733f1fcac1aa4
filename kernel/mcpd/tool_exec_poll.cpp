// Executor::poll: the bridge's side of running calls, each time it wakes.
#include "tool_job.h"

#include "bridge_config.h"

#include "../clock.h"
#include "../log.h"
#include "../mm/kheap.h"
#include <abi/sys.h>

#include <new>
#include <ktl/decimal.h>

namespace mcpd {

namespace {

// Collects an ended tool task (its join completes at once) and drops the bridge's handle and
// the call's buffers. One killed while blocked may not have ended yet: it is detached, so the
// kernel releases it when it does (no zombie), and its memory was never the call's buffers.
void reap(Job& job, uint64_t join_timeout_ns) {
    if (sys::task_join(job.task, join_timeout_ns) == -static_cast<int64_t>(ktl::Error::TimedOut))
        sys::task_detach(job.task);
    sys::cap_delete(job.task);
    // The capability made for this call (a collection's) goes now, with whatever was derived from
    // it: the token or the capability it became.
    if (job.source_transient)
        sys::cap_delete(job.source);
    job.source_transient = false;
    release_buffers(job);
}

// Gives the tool task the request slot it asked for (ToolContext::exchange).
void lend_exchange(Job& job) {
    if (!job.exchange_wanted || __atomic_load_n(&job.exchange, __ATOMIC_ACQUIRE) || job.exchange_refused)
        return;
    auto mem = kheap::alloc(sizeof(mcp::ClientExchange));
    if (!mem) {
        job.exchange_refused = true;
        return;
    }
    __atomic_store_n(&job.exchange, new (*mem) mcp::ClientExchange, __ATOMIC_RELEASE);
}

// "srv-<n>": the ids of the bridge's requests to clients (strings, so never a client's own
// numeric ids; unique per bridge for the boot).
size_t request_id(uint64_t n, char (&out)[mcp::ClientExchange::kMaxId]) {
    char digits[20];
    const std::string_view number = ktl::format_decimal(n, digits);
    constexpr std::string_view kPrefix = "srv-";
    size_t len = 0;
    for (char c : kPrefix)
        out[len++] = c;
    for (char c : number)
        if (len + 1 < sizeof out) // (a plain string of kMaxId - 1 bytes at most)
            out[len++] = c;
    return len;
}

// Sends the call's queued log records (dropped once it is answered or cancelled).
template <typename Send>
void flush_logs(mcp::Server& server, Job& job, std::span<char> out, Send&& send) {
    for (uint32_t head = __atomic_load_n(&job.log_head, __ATOMIC_ACQUIRE); job.log_tail != head;) {
        const Job::LogSlot& slot = job.logs[job.log_tail % Job::kLogSlots];
        size_t n = job.answered || job.cancel ? 0 : server.call_log(job.call, slot.level, slot.text, out);
        if (n > 0)
            send(job, n, false);
        __atomic_store_n(&job.log_tail, job.log_tail + 1, __ATOMIC_RELEASE);
    }
}

} // namespace

void Executor::poll(mcp::Server& server, std::span<char> out, Send send_to, void* ctx) {
    uint64_t now = clock::monotonic_ns();
    auto send = [&](const Job& j, size_t n, bool final) {
        if (n == 0 && !final)
            return;
        if (!final || n == 0) {
            send_to(ctx, j.call, n, final);
            return;
        }
        // An answer: the transport's part of it and the whole call (CallStages).
        const uint64_t sending = clock::monotonic_ns();
        send_to(ctx, j.call, n, final);
        const uint64_t sent = clock::monotonic_ns();
        server.stages().add_since(mcp::CallStages::Send, sending, sent);
        if (j.call.received_ns)
            server.stages().add_since(mcp::CallStages::Call, j.call.received_ns, sent);
    };
    Recovery store {};
    bool store_asked = false; // asked once per poll, for every call that waits for the store
    for (auto& j : std::span<Job>(m_jobs, m_slots)) {
        if (j.state == Job::State::Free)
            continue;
        if (j.state == Job::State::Syncing) {
            const int64_t durable = sys::storage_durable(j.sync_ticket);
            if (durable == 0)
                continue; // the storage task calls this bridge back when the commit is written
            j.closed.durable = j.closed.durable && durable > 0;
            send(j, server.answer_call(j.call, j.closed, { j.out, j.out_len }, out), true);
            j.state = Job::State::Free;
            continue;
        }
        if (j.state == Job::State::Waiting) {
            if (!store_asked)
                store = recovery(m_caps);
            store_asked = true;
            if (j.cancel) { // cancelled while it waited: released and audited, never answered (MCP "Cancellation")
                send(j, server.finish_call(j.call, false, {}, {}, true, out), true);
                release_call(j);
                continue;
            }
            if (store.ongoing && now < j.deadline_ns) {
                // The client asked for progress: how far recovery is, at once and then as it goes on
                // (a notification's progress must grow, so only a larger count is sent).
                const bool first = j.wait_reported_ns == 0;
                if (first || (now - j.wait_reported_ns >= kRecoveryProgressNs && store.replayed > j.done)) {
                    j.wait_reported_ns = now;
                    j.done = store.replayed;
                    send(j,
                         server.progress(j.call, store.replayed, 0,
                                         "waiting for the store: logged changes replayed so far", out),
                         false);
                }
                continue;
            }
            mcp::ToolError err;
            if (!store.ongoing) {
                // The store is back: the call starts as it would have had it come now.
                bool transient = false, elsewhere = false;
                auto source = token_source(m_caps, *j.def, j.arguments.root(), &transient, &elsewhere);
                j.elsewhere = elsewhere;
                if (source && spawn(j, *source, transient, err))
                    continue;
                if (!source)
                    err = source_error(source.error());
            } else {
                err = still_recovering(store.replayed);
            }
            send(j, server.finish_call(j.call, false, {}, err, false, out), true);
            release_call(j);
            continue;
        }
        flush_logs(server, j, out, send); // what a call logged goes out before its progress and result
        // A finished call needs no system call to tell (its task sets Done before it ends, and
        // reap() joins it). Otherwise the kernel is asked whether the task ended, and the state
        // read again after: one that finished in between is not taken for a fault.
        bool ended = j.state != Job::State::Done && sys::task_status(j.task) == 1;
        if (ended && j.state != Job::State::Done) {
            // It ended without finishing: a fault (or a kill from elsewhere). Answered now, not at
            // the wall-time limit; the kernel has already taken back what the task held.
            KLOG_WARN("mcp: tool task for '%s' ended without finishing (a fault)", j.call.tool);
            reap(j, 1'000'000);
            if (!j.answered)
                send(j,
                     server.finish_call(j.call, false, {},
                                        { mcp::ErrorCode::InternalError, "the tool task faulted and was ended",
                                          "tool_fault" },
                                        j.cancel, out),
                     true);
            j.state = Job::State::Free;
            continue;
        }
        lend_exchange(j);
        if (j.state == Job::State::Done) {
            mcp::InputRound* round = j.round; // kept past reap(), which frees the call's buffers
            j.round = nullptr;
            reap(j, 1'000'000'000);
            if (!j.answered && !j.cancel && j.progress_seq != j.progress_sent) {
                __atomic_store_n(&j.progress_sent, j.progress_seq, __ATOMIC_RELEASE);
                send(j, server.progress(j.call, j.done, j.total, j.message, out), false);
            }
            const bool changed = j.call.action && changes_store(j.call.action);
            if (!j.answered && !j.cancel && round && round->pending()) {
                // It asked for input (2026-07-28): this round ends with the requests (after whatever
                // it changed is durable; a rare path, so the bridge simply waits).
                if (changed)
                    (void)sys::storage_sync(j.call.start_ns);
                send(j, server.input_required(j.call, round->requests(), round->used(), round->used_fits(), out), true);
            } else if (!j.answered && j.cancel) { // audited, never answered (MCP "Cancellation")
                send(j, server.finish_call(j.call, false, {}, {}, true, out), true);
            } else if (!j.answered) {
                if (j.task_start_ns)
                    server.stages().add_since(mcp::CallStages::Body, j.task_start_ns, j.task_end_ns);
                // Late by when the tool stopped, not by when this bridge (busy elsewhere, e.g. a
                // flood of refused callers) came to look: a result finished in time is answered.
                bool stopped_late = j.ok && j.task_end_ns >= j.deadline_ns;
                mcp::ToolError err = stopped_late ? mcp::ToolError { mcp::ErrorCode::LimitTimeExceeded,
                                                                     "the tool ran past its wall-time limit" }
                                                  : j.err;
                j.closed = server.close_call(j.call, j.ok && !stopped_late, { j.out, j.out_len }, err);
                // A change is answered once it and the call's audit record are on the disk (one
                // commit: the tool task's writes were only staged, abi::kTaskAckStaged). The
                // answer waits in the job, not the bridge: calls that end meanwhile join the commit.
                const int64_t ticket = changed ? sys::storage_barrier(j.call.start_ns) : 0;
                if (ticket > 0) {
                    j.sync_ticket = static_cast<uint64_t>(ticket);
                    j.state = Job::State::Syncing;
                    if (round)
                        kheap::free(round);
                    continue;
                }
                j.closed.durable = j.closed.durable && ticket == 0;
                send(j, server.answer_call(j.call, j.closed, { j.out, j.out_len }, out), true);
            }
            if (round)
                kheap::free(round);
            j.state = Job::State::Free;
            continue;
        }
        if (j.kill_at_ns != 0 && now >= j.kill_at_ns) {
            // Told to stop and still running: end the task. A blocked one dies when its wait
            // ends (the kernel may still be filling its buffers); try again next time.
            int64_t dead = sys::task_kill(j.task);
            if (dead == 1 || dead < 0) {
                KLOG_NOTICE("mcp: tool task for '%s' killed: it did not stop %llu ms after being told to", j.call.tool,
                            static_cast<unsigned long long>(kStopGraceNs / 1000000));
                reap(j, 1'000'000);
                if (!j.answered) // cancelled: released and audited, never answered (MCP "Cancellation")
                    send(j, server.finish_call(j.call, false, {}, {}, true, out), true);
                j.state = Job::State::Free;
            }
            continue;
        }
        if (!j.answered && now >= j.deadline_ns) {
            // Answer now; the task is told to stop (tools check should_stop()) and killed if it
            // has not ended after the grace period.
            j.answered = true;
            j.cancel = true;
            j.kill_at_ns = now + kStopGraceNs;
            send(j,
                 server.finish_call(j.call, false, {},
                                    { mcp::ErrorCode::LimitTimeExceeded, "the tool ran past its wall-time limit" },
                                    false, out),
                 true);
            continue;
        }
        uint64_t seq = j.progress_seq;
        if (!j.answered && !j.cancel && seq != j.progress_sent) {
            __atomic_store_n(&j.progress_sent, seq, __ATOMIC_RELEASE);
            send(j, server.progress(j.call, j.done, j.total, j.message, out), false);
        }
        // A request the tool queued (it withdraws it itself once told to stop).
        mcp::ClientExchange* ex = __atomic_load_n(&j.exchange, __ATOMIC_ACQUIRE);
        if (ex && !j.answered && !j.cancel && ex->state() == mcp::ClientExchange::State::Queued) {
            char id[mcp::ClientExchange::kMaxId];
            std::string_view sid(id, request_id(++m_requests, id));
            size_t n = mcp::Server::client_request(sid, ex->method(), ex->params(), out);
            if (n == 0) {
                ex->unsent();
                continue;
            }
            ex->sent(sid, j.call.origin);
            send(j, n, false);
        }
    }
}

} // namespace mcpd
