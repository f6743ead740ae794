// An OCI runtime bundle (config.json plus an empty root directory) written per execution
// for runsc. Declared policy only, like the jail spec: the process, its user, its
// environment (the request's and nothing else), a read-only root with the granted
// directories bound into it, and no capabilities.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral {

struct oci_mount {
  enum class kind { ro_bind, rw_bind, tmpfs } type = kind::ro_bind;
  std::string source;  // host path (binds only)
  std::string target;  // inside the sandbox
  std::uint64_t size_bytes = 0;  // tmpfs only
};

struct oci_process {
  std::vector<std::string> args;  // args[0] is the program, resolved inside the sandbox
  std::vector<std::string> env;   // "KEY=value"
  std::string cwd;
  std::uint32_t uid = 65534;
  std::uint32_t gid = 65534;
  std::uint64_t nofile = 4096;
};

struct oci_bundle_spec {
  oci_process process;
  std::vector<oci_mount> mounts;  // applied in order over the read-only root
  std::string hostname = "corral";
  bool network_namespace = true;  // false: the sandbox shares the host's network
};

// The config.json text (OCI runtime spec 1.0) for a bundle whose root is `rootfs`.
std::string oci_config_json(const oci_bundle_spec& spec, const std::string& rootfs);

// Creates `dir` (mode 0700, must not exist), `dir`/rootfs and `dir`/config.json.
status write_oci_bundle(const std::string& dir, const oci_bundle_spec& spec);

} // namespace corral
