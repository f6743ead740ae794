// A runtime's claim on its instance name in a state dir that other runtimes may share (a
// daemon and CLI runs, parallel CLI runs). The instance prefixes every execution id, so
// lease records, cgroups and scratch dirs (`scratch/corral-<instance>-...`) carry it.
//
// The claim is `<state>/owners/<instance>`, created exclusively and held under flock for
// the runtime's life. The kernel drops the lock when the process dies, however it dies, so
// a start-up sweep tells a dead runtime's leftovers from a live peer's without trusting a
// pid that may have been reused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

class instance_claim {
public:
  // Picks a fresh random instance name and claims it (retrying on a collision).
  static expected<instance_claim> take(const std::string& state_dir);

  instance_claim(instance_claim&& other) noexcept;
  instance_claim& operator=(instance_claim&&) = delete;
  instance_claim(const instance_claim&) = delete;
  ~instance_claim();  // a clean stop removes the claim; a crash leaves it, unlocked

  const std::string& instance() const { return instance_; }

private:
  instance_claim(std::string path, std::string instance, int fd);
  std::string path_;
  std::string instance_;
  int fd_ = -1;
};

// A fresh random instance name: 8 hex digits.
std::string random_instance_name();
// The names in `dir` (without . and ..); empty when it cannot be read.
std::vector<std::string> dir_entries(const std::string& dir);

enum class owner_state : std::uint8_t {
  alive,    // its claim is locked: a live runtime's, never touched
  dead,     // its claim is there and unlocked: the runtime died (or is stopping cleanly)
  unknown,  // no claim (a runtime of a version before claims): left alone
};

owner_state instance_owner(const std::string& state_dir, const std::string& instance);

struct scratch_sweep_summary {
  int removed = 0;  // scratch dirs of runtimes that are gone
  int kept = 0;     // scratch dirs of a runtime alive or unknown, left alone
  int claims_removed = 0;
  std::vector<std::string> errors;
};

// Removes `scratch/corral-<instance>-*` dirs whose instance's claim is dead, then the dead
// claims. Run after the lease sweep, which has killed what might still use them.
scratch_sweep_summary sweep_scratch(const std::string& state_dir);

} // namespace corral
