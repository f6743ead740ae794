// Trial verdicts kept in the state dir (`<state>/preflight/`), so a one-shot `corral run
// --tier container|gvisor` pays for its own container, not also for a trial one on every
// start. Only a success is kept, for a short lifetime; a failure is always tried again.
// The key names everything the trial depended on: the tier, the engine binary (path, size
// and modification time, which change with its version), the tier's settings and flags,
// the kernel release and the uid. A verdict file holds its whole key, so a name collision
// reads as no verdict. A forged or stale verdict skips only the trial: a broken engine then
// fails the execution's own launch, closed, with the engine's error.
#pragma once

#include <chrono>
#include <string>

namespace corral {

class preflight_verdicts {
public:
  explicit preflight_verdicts(std::string dir, std::chrono::seconds lifetime = std::chrono::seconds(600))
      : dir_(std::move(dir)), lifetime_(lifetime) {}

  // The key for `tier` run through `engine` (a resolved path) with `settings`.
  static std::string key(const std::string& tier, const std::string& engine, const std::string& settings);

  bool fresh_success(const std::string& key) const;
  void record_success(const std::string& key) const;  // best effort: a failed write costs a trial
  const std::string& dir() const { return dir_; }

private:
  std::string file_for(const std::string& key) const;
  std::string dir_;
  std::chrono::seconds lifetime_;
};

} // namespace corral
