#pragma once
// A line-oriented console shell for people and integration tests: status, log, clock and
// power commands. Input arrives through the UART's interrupt-driven receive ring.
namespace shell {

[[noreturn]] void run();

} // namespace shell
