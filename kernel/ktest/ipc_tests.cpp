// IPC tests: mutex, semaphore and event semantics with timeouts; 100,000 messages through a
// bounded queue in order with nothing lost.
#include "cases.h"

namespace ktest {
namespace {

uint64_t g_plain_counter = 0;
bool g_overlap = false;
uint32_t g_mutex_slot[3];

int64_t locker(void* arg) {
    auto i = reinterpret_cast<uintptr_t>(arg);
    static volatile bool inside = false;
    for (int n = 0; n < 500; ++n) {
        if (sys::mutex_lock(g_mutex_slot[i], 0) != 0)
            return -2;
        if (inside)
            g_overlap = true;
        inside = true;
        uint64_t v = g_plain_counter;
        sys::yield(); // invite interleaving inside the critical section
        g_plain_counter = v + 1;
        inside = false;
        if (sys::mutex_unlock(g_mutex_slot[i]) != 0)
            return -3;
    }
    return 0;
}

struct Stream {
    uint32_t queue = 0; // slot in the producer's table
    uint32_t count = 0;
};
Stream g_stream;

struct Message {
    uint64_t seq;
    uint64_t check;
};

int64_t producer(void*) {
    for (uint32_t i = 0; i < g_stream.count; ++i) {
        Message m { i, i * 0x9e3779b97f4a7c15ull };
        if (sys::queue_send(g_stream.queue, &m, sizeof m, 0) != 0)
            return -static_cast<int64_t>(i) - 1;
    }
    return 0;
}

} // namespace

bool sync_objects(const Caps& caps) {
    // Semaphore: counts, timed wait, bounds.
    int64_t sem = sys::sem_create(caps.factory, 2, 2);
    KT_CHECK(sem >= 0, "sem_create %lld", (long long)sem);
    KT_CHECK(sys::sem_wait(sem, 0) == 0, "first unit");
    KT_CHECK(sys::sem_wait(sem, 0) == 0, "second unit");
    uint64_t t0 = sys::clock_ns();
    int64_t r = sys::sem_wait(sem, 50 * kMs);
    uint64_t waited = sys::clock_ns() - t0;
    KT_CHECK(r == -int64_t(ktl::Error::TimedOut), "empty semaphore wait returned %lld", (long long)r);
    KT_CHECK(waited >= 50 * kMs && waited < 500 * kMs, "timed wait took %llu ns", (unsigned long long)waited);
    KT_CHECK(sys::sem_post(sem) == 0 && sys::sem_post(sem) == 0, "posts");
    KT_CHECK(sys::sem_post(sem) == -int64_t(ktl::Error::Full), "post past max must fail");
    KT_CHECK(sys::sem_create(caps.factory, 3, 2) == -int64_t(ktl::Error::InvalidArgs), "bounds");

    // Event: timeout, then auto-reset signal consumed by one wait.
    int64_t ev = sys::event_create(caps.factory, 1);
    KT_CHECK(ev >= 0, "event_create");
    KT_CHECK(sys::event_wait(ev, 20 * kMs) == -int64_t(ktl::Error::TimedOut), "event timeout");
    KT_CHECK(sys::event_signal(ev) == 0, "signal");
    KT_CHECK(sys::event_wait(ev, 20 * kMs) == 0, "signalled event");
    KT_CHECK(sys::event_wait(ev, 20 * kMs) == -int64_t(ktl::Error::TimedOut), "auto-reset");

    // Mutex: three tasks increment a counter with a yield inside the critical section.
    int64_t mutex = sys::mutex_create(caps.factory);
    KT_CHECK(mutex >= 0, "mutex_create");
    KT_CHECK(sys::mutex_unlock(mutex) == -int64_t(ktl::Error::AccessDenied), "unlock by non-owner");
    g_plain_counter = 0;
    g_overlap = false;
    int64_t tasks[3];
    for (int i = 0; i < 3; ++i) {
        tasks[i] = spawn(caps, "locker", locker, reinterpret_cast<void*>(static_cast<uintptr_t>(i)), 10);
        KT_CHECK(tasks[i] >= 0, "spawn locker");
        int64_t s = share(static_cast<uint32_t>(mutex), static_cast<uint32_t>(tasks[i]), 0x3);
        KT_CHECK(s >= 0, "share mutex %lld", (long long)s);
        g_mutex_slot[i] = static_cast<uint32_t>(s);
    }
    for (int i = 0; i < 3; ++i) {
        int64_t code = join(static_cast<uint32_t>(tasks[i]));
        KT_CHECK(code == 0, "locker %d ended with %lld", i, (long long)code);
    }
    console::printf("ktest:   mutex: 3 tasks x 500 increments -> %llu, overlap %s\n",
                    (unsigned long long)g_plain_counter, g_overlap ? "YES" : "no");
    KT_CHECK(g_plain_counter == 1500 && !g_overlap, "mutual exclusion violated");
    return true;
}

bool queue_100k(const Caps& caps) {
    constexpr uint32_t kMessages = 100000;
    int64_t q = sys::queue_create(caps.factory, sizeof(Message), 64);
    KT_CHECK(q >= 0, "queue_create %lld", (long long)q);
    KT_CHECK(sys::queue_create(caps.factory, 8192, 4) == -int64_t(ktl::Error::InvalidArgs),
             "oversized slot must be refused");
    g_stream.count = kMessages;
    int64_t prod = spawn(caps, "producer", producer, nullptr, 10);
    KT_CHECK(prod >= 0, "spawn producer");
    int64_t s = share(static_cast<uint32_t>(q), static_cast<uint32_t>(prod), 0x2 /* write only */);
    KT_CHECK(s >= 0, "share queue");
    g_stream.queue = static_cast<uint32_t>(s);
    uint64_t t0 = sys::clock_ns();
    for (uint32_t i = 0; i < kMessages; ++i) {
        Message m {};
        int64_t len = sys::queue_receive(q, &m, sizeof m, 5000 * kMs);
        KT_CHECK(len == sizeof m, "receive %u returned %lld", i, (long long)len);
        KT_CHECK(m.seq == i && m.check == i * 0x9e3779b97f4a7c15ull, "message %u out of order or corrupt (seq %llu)", i,
                 (unsigned long long)m.seq);
    }
    uint64_t elapsed = sys::clock_ns() - t0;
    KT_CHECK(join(static_cast<uint32_t>(prod)) == 0, "producer failed");
    Message extra;
    KT_CHECK(sys::queue_receive(q, &extra, sizeof extra, 10 * kMs) == -int64_t(ktl::Error::TimedOut),
             "queue must be empty");
    console::printf("ktest:   %u messages in order, none lost, %llu ms (%llu msg/s)\n", kMessages,
                    (unsigned long long)(elapsed / kMs), (unsigned long long)(kMessages * 1000000000ull / elapsed));
    return true;
}

} // namespace ktest
