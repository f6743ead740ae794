// Writes the helper's status lines (tiers/jail/status_line.hpp) to fd 4. Never throws and never
// dies of SIGPIPE: a runtime that went away must not stop the helper's cleanup.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace corral::helper {

void report_step(const char* name, std::chrono::steady_clock::time_point since);
void report_started(long pid);
void report_holding(long pid, std::uint64_t start_time);
void report_failed(int error_number, const char* step, const std::string& message);
void report_exited(int wait_status, std::uint64_t maxrss_kb, std::uint64_t user_us,
                   std::uint64_t system_us, bool terminated);

} // namespace corral::helper
