// Runs a tier's probe command (`runsc --version`, `docker info`) with a deadline, so a
// hung runtime binary makes its tier unavailable instead of freezing dispatch. The probe
// gets an empty environment but PATH, no stdin, and is killed (its whole process group)
// at the deadline.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace corral {

struct probe_result {
  bool ran = false;        // the program started
  bool timed_out = false;  // killed at the deadline
  int exit_code = -1;      // when it exited by itself
  std::string output;      // stdout and stderr, at most a few KiB
  std::string error;       // why it did not run
};

probe_result run_probe(const std::vector<std::string>& argv, std::chrono::milliseconds deadline);

// `name` itself when it holds a slash, else the first executable on PATH; empty if none.
std::string find_on_path(const std::string& name);

} // namespace corral
