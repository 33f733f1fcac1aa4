#pragma once
// Wall time over the network (SNTP, lwIP's apps/sntp) for boards without an RTC, and to correct
// one that drifts: the server from `ntp=A.B.C.D[:PORT]`, else from DHCP; `ntp=off` for none.
// The first answer sets the clock (kernel://status clock.source "sntp"); then hourly.
namespace net {

void sntp_start(); // net task, once the interface is up (or DHCP has started)

} // namespace net
