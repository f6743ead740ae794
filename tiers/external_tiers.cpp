#include "tiers/external_tiers.hpp"

#include "tiers/microvm_tier.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace corral {

namespace {

std::string first_line(const std::string& text) {
  auto end = text.find('\n');
  auto line = text.substr(0, end);
  return line.size() > 200 ? line.substr(0, 200) + "…" : line;
}

// The probe's verdict on one binary: empty when it answered well.
std::string probe_failure(const std::string& what, const std::vector<std::string>& argv,
                          std::chrono::milliseconds deadline) {
  auto r = run_probe(argv, deadline);
  std::string cmd;
  for (auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (!r.ran) return what + " could not be started (" + r.error + ")";
  if (r.timed_out)
    return "`" + cmd + "` did not answer within " + std::to_string(deadline.count()) + " ms (hung runtime?)";
  if (r.exit_code != 0)
    return "`" + cmd + "` failed (exit " + std::to_string(r.exit_code) + "): " + first_line(r.output);
  return "";
}

std::string not_launched(const std::string& tier, const std::string& found) {
  return found + ", but corral cannot launch executions through the " + tier +
         " tier yet; choose the landlock tier";
}

class gvisor_tier : public external_tier {
public:
  gvisor_tier(gvisor_settings s, std::chrono::milliseconds d) : external_tier("gvisor", d), s_(std::move(s)) {}

protected:
  tier_status preflight(std::chrono::milliseconds deadline) const override {
    auto bin = find_on_path(s_.runsc);
    if (bin.empty())
      return {false, "runsc ('" + s_.runsc + "') was not found; install gVisor (Debian package runsc) "
                     "or set [sandbox.gvisor] runsc"};
    if (auto why = probe_failure("runsc", {bin, "--version"}, deadline); !why.empty()) return {false, why};
    return {false, not_launched("gvisor", "runsc found at " + bin)};
  }

private:
  gvisor_settings s_;
};

class container_tier : public external_tier {
public:
  container_tier(container_settings s, std::chrono::milliseconds d)
      : external_tier("container", d), s_(std::move(s)) {}

protected:
  tier_status preflight(std::chrono::milliseconds deadline) const override {
    auto bin = find_on_path(s_.engine);
    if (bin.empty())
      return {false, "the container engine CLI '" + s_.engine + "' was not found; install podman or "
                     "docker, or set [sandbox.container] engine"};
    // `info` talks to the engine: a CLI without a running engine fails here, not mid-run.
    if (auto why = probe_failure(s_.engine, {bin, "info"}, deadline); !why.empty()) return {false, why};
    if (s_.image.empty()) return {false, "no image configured: set [sandbox.container] image"};
    return {false, not_launched("container", "the engine at " + bin + " answers")};
  }

private:
  container_settings s_;
};

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

expected<launch_plan> external_tier::plan(const launch_request&, const lease_grant&) const {
  auto st = available();
  return make_failure(failure_kind::tier_unavailable, "the " + name_ + " tier is unavailable: " + st.reason);
}

std::unique_ptr<external_tier> make_gvisor_tier(const gvisor_settings& s, std::chrono::milliseconds deadline) {
  return std::make_unique<gvisor_tier>(s, deadline);
}

std::unique_ptr<external_tier> make_container_tier(const container_settings& s, std::chrono::milliseconds deadline) {
  return std::make_unique<container_tier>(s, deadline);
}

void add_external_tiers(tier_registry& registry, const profile& prof, std::chrono::milliseconds deadline) {
  registry.add(make_gvisor_tier(prof.gvisor, deadline));
  registry.add(make_container_tier(prof.container, deadline));
  registry.add(std::make_shared<microvm_tier>(prof.microvm, prof.microvm.launcher, deadline));
  registry.add(std::make_shared<e2b_tier>(deadline));
}

} // namespace corral
