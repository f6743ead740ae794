#include "tiers/exec_helper/status_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <unistd.h>

#include "config/write_all.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

namespace {

void write_line(const std::string& line) {
  (void)write_all(kStatusFd, line);  // the runtime is gone; cleanup goes on regardless
}

} // namespace

void report_step(const char* name, std::chrono::steady_clock::time_point since) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - since)
                .count();
  // No allocation: the target reports a step between its clone and execve, while it still
  // shares the helper's heap.
  char line[128];
  int n = std::snprintf(line, sizeof line, "step %s %lld\n", name, static_cast<long long>(us));
  if (n > 0) (void)write_all(kStatusFd, std::string_view(line, std::min(static_cast<std::size_t>(n), sizeof line - 1)));
}

void report_started(long pid) { write_line("started " + std::to_string(pid) + "\n"); }

void report_holding(long pid, std::uint64_t start_time) {
  write_line("holding " + std::to_string(pid) + " " + std::to_string(start_time) + "\n");
}

void report_failed(int error_number, const char* step, const std::string& message) {
  std::string clean = message;
  for (auto& c : clean)
    if (c == '\n') c = ' ';
  write_line("failed " + std::to_string(error_number) + " " + step + " " + clean + "\n");
}

void report_exited(int wait_status, std::uint64_t maxrss_kb, std::uint64_t user_us,
                   std::uint64_t system_us, bool terminated) {
  write_line("exited " + std::to_string(wait_status) + " " + std::to_string(maxrss_kb) + " " +
             std::to_string(user_us) + " " + std::to_string(system_us) + " " +
             (terminated ? "1" : "0") + "\n");
}

} // namespace corral::helper
