#include "proto/describe/where_we_run.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace corral {

namespace {

bool file_exists(const char* path) { return ::access(path, F_OK) == 0; }

} // namespace

run_environment detect_run_environment(const std::string& mountinfo, const std::string& proc_1_cgroup) {
  run_environment env;
  std::string cgroups;
  {
    std::ifstream in(proc_1_cgroup);
    std::stringstream all;
    all << in.rdbuf();
    cgroups = all.str();
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST") || cgroups.find("kubepods") != std::string::npos)
    env.container = "kubernetes";
  else if (file_exists("/run/.containerenv") || cgroups.find("libpod") != std::string::npos)
    env.container = "podman";
  else if (file_exists("/.dockerenv") || cgroups.find("docker") != std::string::npos)
    env.container = "docker";
  else if (const char* c = std::getenv("container"); c && *c)
    env.container = "container";
  std::ifstream in(mountinfo);
  for (std::string line; std::getline(in, line);) {
    // id parent major:minor root mount-point options ...
    std::istringstream fields(line);
    std::string id, parent, dev, root, point, options;
    if (!(fields >> id >> parent >> dev >> root >> point >> options)) continue;
    if (point.rfind("/proc/", 0) != 0) continue;
    auto dash = line.find(" - ");
    std::string fstype = dash == std::string::npos ? "" : line.substr(dash + 3, line.find(' ', dash + 3) - dash - 3);
    // The host's own: binfmt_misc and systemd's automount of it are not a runtime's masks.
    if (fstype == "binfmt_misc" || fstype == "autofs") continue;
    if (point == "/proc/sys" && options.rfind("ro", 0) == 0) env.proc_read_only_sys = true;
    else env.masked_proc.push_back(point);
  }
  return env;
}

std::vector<std::string> landlock_tier_advice(const kernel_features& f, const run_environment& env) {
  std::vector<std::string> out;
  bool kube = env.container == "kubernetes";
  if (!f.user_namespaces)
    out.push_back(std::string("user namespaces cannot be created (") + f.user_namespace_error + "): " +
                  (kube ? "set `hostUsers: false` in the pod spec (Kubernetes 1.30+ with a runtime that supports "
                          "user namespaces), and a seccompProfile that allows unshare/clone with CLONE_NEWUSER "
                          "(RuntimeDefault refuses it without CAP_SYS_ADMIN)"
                        : env.container.empty()
                            ? "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
                              "on Ubuntu an AppArmor profile for corral since kernel.apparmor_restrict_unprivileged_"
                              "userns=1 blocks them)"
                            : "run the container with a seccomp profile that allows unshare and clone with "
                              "CLONE_NEWUSER (Docker's and podman's default refuses them without CAP_SYS_ADMIN)"));
  if (!env.masked_proc.empty() || env.proc_read_only_sys)
    out.push_back("/proc is masked (" + std::to_string(env.masked_proc.size()) +
                  " paths covered), so a pid namespace cannot mount its own /proc: " +
                  (kube ? "set `procMount: Unmasked` in the container's securityContext (needs hostUsers: false)"
                        : "start the container with `--security-opt unmask=ALL` (podman) or "
                          "`--security-opt systempaths=unconfined` (Docker)"));
  if (f.cgroup_version == 0)
    out.push_back("no writable cgroup (" + f.cgroup_error + "): " +
                  (kube ? "no pod gets a writable cgroup by default; run corral as a node-level daemon "
                          "(a DaemonSet with a delegated cgroup), or keep the contained tier"
                        : env.container.empty()
                            ? "delegate a cgroup v2 subtree (`systemd-run --user --scope -p Delegate=yes corral ...`) "
                              "or run `corral serve` as root and connect to it"
                            : "give the container a writable, delegated cgroup v2 (podman `--cgroupns=private` on a "
                              "systemd host with Delegate=yes, Docker `--cgroupns=private` with cgroup v2)"));
  return out;
}

nlohmann::json run_environment_json(const run_environment& env, const kernel_features& f) {
  nlohmann::json j;
  j["container"] = env.container.empty() ? nlohmann::json() : nlohmann::json(env.container);
  j["masked_proc_paths"] = env.masked_proc.size();
  j["landlock_tier_needs"] = landlock_tier_advice(f, env);
  return j;
}

} // namespace corral
