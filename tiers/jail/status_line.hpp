// The exec helper's status channel (fd 4): one line per event, text so a person can read
// a captured exchange. The runtime parses these into messages for the execution actor.
//
//   step <name> <microseconds>          a setup step finished (latency breakdown)
//   started <pid>                       the target process exists (pid as the helper sees it)
//   failed <errno> <step> <message…>    the target could not be started
//   exited <wait-status> <maxrss-kb> <user-us> <system-us> <terminated>
//                                       the target and every descendant are gone
//   holding <pid> <start-time>          hold mode: the holder's init, by host pid and its
//                                       start time (/proc/<pid>/stat field 22), read by its
//                                       parent while the pid cannot be reused
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace corral {

struct status_line {
  enum class kind { step, started, failed, exited, holding } what = kind::step;
  std::string name;        // step name, or failed step
  std::uint64_t micros = 0;
  long pid = 0;
  int error_number = 0;
  std::string message;
  int wait_status = 0;
  std::uint64_t maxrss_kb = 0;
  std::uint64_t user_us = 0;
  std::uint64_t system_us = 0;
  bool terminated = false;  // the helper was asked to terminate (timeout or cancel)
  std::uint64_t start_time = 0;  // holding
};

std::optional<status_line> parse_status_line(const std::string& line);

} // namespace corral
