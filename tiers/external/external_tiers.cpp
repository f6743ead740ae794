#include "tiers/external/external_tiers.hpp"

#include <cctype>
#include <sstream>

#include "tiers/external/container_tier.hpp"
#include "tiers/external/gvisor_tier.hpp"
#include "tiers/microvm/microvm_tier.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace corral {

std::string first_line(const std::string& text) {
  auto end = text.find('\n');
  auto line = text.substr(0, end);
  return line.size() > 200 ? line.substr(0, 200) + "…" : line;
}

std::string telling_line(const std::string& output) {
  // Engines put warnings before the error (podman: `time=... level=warning msg=...` about
  // its cgroup manager, then `Error: ...`): the first line that says error wins, else the
  // first that is not a warning, else the first.
  auto lower = [](std::string l) {
    for (auto& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return l;
  };
  std::vector<std::pair<std::string, std::string>> lines;  // as printed, lower case
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.emplace_back(line, lower(line));
  if (lines.empty()) return "";
  for (auto& [line, low] : lines)
    if (low.find("error") != std::string::npos || low.find("fatal") != std::string::npos) return first_line(line);
  for (auto& [line, low] : lines)
    if (low.find("warn") == std::string::npos) return first_line(line);
  return first_line(lines.front().first);
}

std::string probe_failure(const std::string& what, const std::vector<std::string>& argv,
                          std::chrono::milliseconds deadline) {
  auto r = run_probe(argv, deadline);
  std::string cmd;
  for (auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!r.ran) return what + " could not be started (" + r.error + ")";
  if (r.timed_out)
    return "`" + cmd + "` did not answer within " + std::to_string(deadline.count()) + " ms (hung runtime?)";
  if (r.exit_code != 0)
    return "`" + cmd + "` failed (exit " + std::to_string(r.exit_code) + "): " + telling_line(r.output);
  return "";
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

status make_private_dir(const std::string& dir, const std::function<status()>& fill) {
  if (::mkdir(dir.c_str(), 0700) < 0)
    return make_failure(failure_kind::internal, "mkdir " + dir + ": " + std::strerror(errno));
  auto filled = fill();
  if (!filled) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return filled;
}

namespace {

class e2b_tier : public external_tier {
public:
  explicit e2b_tier(std::chrono::milliseconds d) : external_tier("e2b", d) {}

protected:
  tier_status preflight(std::chrono::milliseconds) const override {
    return {false, "e2b runs code on a remote service this machine cannot reach, and corral has no "
                   "e2b launcher; choose a local tier"};
  }
};

} // namespace

tier_status external_tier::available() const {
  std::call_once(once_, [&] { status_ = preflight(deadline_); });
  return status_;
}

tier_status external_tier::trial_once(const std::string& key, const std::function<tier_status()>& trial) const {
  if (verdicts_ && verdicts_->fresh_success(key)) return {true, ""};
  auto verdict = trial();
  if (verdict.available && verdicts_) verdicts_->record_success(key);
  return verdict;
}

failure external_tier::unavailable_error() const {
  return make_failure(failure_kind::tier_unavailable, "the " + name_ + " tier is unavailable: " + available().reason);
}

expected<launch_plan> external_tier::plan(const launch_request&, const lease_grant&) const {
  return unavailable_error();
}

std::unique_ptr<external_tier> make_gvisor_tier(const gvisor_settings& s, std::chrono::milliseconds deadline) {
  profile p;
  p.gvisor = s;
  return std::make_unique<gvisor_tier>(p, detect_kernel_features(), deadline);
}

std::unique_ptr<external_tier> make_container_tier(const container_settings& s, std::chrono::milliseconds deadline) {
  profile p;
  p.container = s;
  return std::make_unique<container_tier>(p, detect_kernel_features(), deadline);
}

void add_external_tiers(tier_registry& registry, const profile& prof, const kernel_features& features,
                        std::chrono::milliseconds deadline, std::shared_ptr<const preflight_verdicts> verdicts) {
  auto gvisor = std::make_shared<gvisor_tier>(prof, features, deadline);
  auto container = std::make_shared<container_tier>(prof, features, deadline);
  gvisor->keep_verdicts(verdicts);
  container->keep_verdicts(verdicts);
  registry.add(gvisor);
  registry.add(container);
  std::vector<root_grant> roots = prof.source_roots;
  roots.insert(roots.end(), prof.output_roots.begin(), prof.output_roots.end());
  registry.add(std::make_shared<microvm_tier>(prof.microvm, prof.microvm.launcher, deadline, std::move(roots)));
  registry.add(std::make_shared<e2b_tier>(deadline));
}

} // namespace corral
