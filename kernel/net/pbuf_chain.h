#pragma once
// Received data arrives as pbuf chains whose first buffers may be empty: lwIP leaves a zero-length
// head on purpose (a reassembled segment whose first fragment held only the TCP header, trimmed
// overlaps). Whoever drains a chain skips those, or it stops at the first and the data behind it
// (and everything after) stays queued for ever.
#include "lwip/pbuf.h"

namespace net {

// Frees the empty buffers at the head of the chain; returns what is left (nullptr: nothing).
inline pbuf* skip_empty(pbuf* p) {
    for (int guard = 0; p && p->len == 0 && guard < 256; ++guard) {
        pbuf* empty = p;
        p = p->next;
        empty->next = nullptr; // the rest is the chain's own, not a second reference
        pbuf_free(empty);
    }
    return p;
}

} // namespace net
