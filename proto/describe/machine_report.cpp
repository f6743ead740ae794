#include "proto/describe/machine_report.hpp"

#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "config/toml/toml_profile.hpp"
#include "tiers/profile_fit.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/jail/idmapped_mount.hpp"
#include "proto/describe/where_we_run.hpp"

namespace corral {

nlohmann::json kernel_features_json(const kernel_features& f) {
  nlohmann::json j;
  j["kernel"] = f.kernel_release;
  j["landlock_abi"] = f.landlock_abi;
  if (!f.landlock_error.empty()) j["landlock_error"] = f.landlock_error;
  j["seccomp"] = f.seccomp;
  j["user_namespaces"] = f.user_namespaces;
  if (!f.user_namespace_error.empty()) j["user_namespace_error"] = f.user_namespace_error;
  j["pidfd"] = f.pidfd;
  j["cgroup_version"] = f.cgroup_version;
  j["cgroup_root"] = f.cgroup_root;
  if (f.cgroup_delegated) j["cgroup_delegated"] = true;  // only then: other machines keep their digest
  j["cgroup_controllers"] = f.cgroup_controllers;
  if (!f.cgroup_error.empty()) j["cgroup_error"] = f.cgroup_error;
  // Probed once per process on the temp dir's filesystem; the landlock tier probes each
  // writable root's own (tiers/jail/idmapped_mount.hpp says what happens without them).
  static const std::string idmap_problem = idmapped_mount_problem(std::filesystem::temp_directory_path().string());
  j["idmapped_mounts"] = idmap_problem.empty();
  if (!idmap_problem.empty()) j["idmapped_mounts_error"] = idmap_problem;
  return j;
}

nlohmann::json tier_capabilities_json(const tier_capabilities& c) {
  return {{"timeout", c.timeout},
          {"memory", c.memory},
          {"pids", c.pids},
          {"cpu", c.cpu},
          {"network_isolation", c.network_isolation},
          {"filesystem_read_isolation", c.filesystem_read_isolation},
          {"filesystem_write_isolation", c.filesystem_write_isolation},
          {"environment_isolation", c.environment_isolation}};
}

nlohmann::json machine_report(const kernel_features& f, const tier_registry& tiers,
                              const selection_policy& policy, const profile* prof) {
  nlohmann::json j;
  j["kernel"] = kernel_features_json(f);
  j["environment"] = run_environment_json(detect_run_environment(), f);
  j["production_mode"] = policy.production;
  j["host_opt_in"] = policy.allow_host;
  auto& list = j["tiers"] = nlohmann::json::array();
  for (auto& t : tiers.all()) {
    auto st = t->available();
    nlohmann::json e{{"name", t->name()}, {"available", st.available}};
    if (!st.available) e["reason"] = st.reason;
    e["enforces"] = tier_capabilities_json(t->capabilities());
    if (t->name() == "host") {
      auto allowed = tiers.select("host", policy);
      e["selectable"] = static_cast<bool>(allowed);
      if (!allowed) e["refused"] = allowed.error().message;
    }
    if (prof && !e.contains("refused"))
      if (auto refusal = profile_refusal(*t, *prof)) e["refused"] = refusal->message;
    if (st.available && j["strongest_available"].is_null() && (t->name() == "landlock" || t->name() == "contained"))
      j["strongest_available"] = t->name();
    list.push_back(std::move(e));
  }
  return j;
}

std::string render_machine_report(const nlohmann::json& r) {
  std::ostringstream o;
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  const auto& k = r["kernel"];
  o << "kernel          " << k["kernel"].get<std::string>() << "\n";
  o << "landlock        ";
  if (k["landlock_abi"].get<int>() > 0) o << "ABI " << k["landlock_abi"].get<int>() << "\n";
  else o << "unavailable: " << k.value("landlock_error", std::string()) << "\n";
  o << "seccomp         " << yes(k["seccomp"].get<bool>()) << "\n";
  o << "user namespaces " << yes(k["user_namespaces"].get<bool>());
  if (k.contains("user_namespace_error")) o << ": " << k["user_namespace_error"].get<std::string>();
  o << "\n";
  o << "pidfd           " << yes(k["pidfd"].get<bool>()) << "\n";
  o << "cgroups         ";
  if (k["cgroup_version"].get<int>() == 0) {
    o << "none usable: " << k.value("cgroup_error", std::string()) << "\n";
  } else {
    o << "v" << k["cgroup_version"].get<int>() << " at " << k["cgroup_root"].get<std::string>()
      << (k.value("cgroup_delegated", false) ? " (the cgroup corral runs in)" : "") << ", controllers:";
    for (auto& c : k["cgroup_controllers"]) o << " " << c.get<std::string>();
    if (k["cgroup_controllers"].empty()) o << " none";
    o << "\n";
    if (k.contains("cgroup_error")) o << "                " << k["cgroup_error"].get<std::string>() << "\n";
  }
  o << "idmapped mounts " << yes(k.value("idmapped_mounts", false));
  if (k.contains("idmapped_mounts_error"))
    o << ": " << k["idmapped_mounts_error"].get<std::string>()
      << " (writable roots are then written as the jail's own id)";
  o << "\n";
  o << "production mode " << yes(r["production_mode"].get<bool>()) << "\n";
  if (r.contains("environment")) {
    const auto& env = r["environment"];
    o << "running in      " << (env["container"].is_null() ? std::string("no container seen") : env["container"].get<std::string>())
      << "\n";
    if (!env["landlock_tier_needs"].empty()) {
      o << "\nthe landlock tier needs:\n";
      for (auto& line : env["landlock_tier_needs"]) o << "  - " << line.get<std::string>() << "\n";
    }
  }
  if (r.contains("strongest_available") && !r["strongest_available"].is_null())
    o << "\nstrongest isolating tier here: " << r["strongest_available"].get<std::string>() << "\n";
  o << "\ntiers:\n";
  for (auto& t : r["tiers"]) {
    o << "  " << t["name"].get<std::string>() << ": ";
    if (t["available"].get<bool>()) {
      o << "available; enforces";
      bool any = false;
      for (auto& [name, on] : t["enforces"].items())
        if (on.get<bool>()) {
          o << " " << name;
          any = true;
        }
      if (!any) o << " nothing";
      if (t.contains("refused")) o << "\n      (refused here: " << t["refused"].get<std::string>() << ")";
    } else {
      o << "unavailable: " << t["reason"].get<std::string>();
    }
    o << "\n";
  }
  return o.str();
}

expected<nlohmann::json> machine_report_for_cli(const std::string& config_path) {
  auto prof = load_profile_here(config_path);
  if (!prof) return prof.error();
  auto features = detect_kernel_features();
  auto tiers = build_default_tiers(*prof, features);
  auto report = machine_report(features, *tiers, selection_policy_from_env(false), &*prof);
  report["profile_tier"] = prof->tier;
  return report;
}

} // namespace corral
