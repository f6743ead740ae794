#include "tiers/external/oci_bundle.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "config/write_all.hpp"

namespace corral {

namespace {

nlohmann::json mount_json(const oci_mount& m) {
  switch (m.type) {
    case oci_mount::kind::tmpfs:
      return {{"destination", m.target}, {"type", "tmpfs"}, {"source", "tmpfs"},
              {"options", {"nosuid", "nodev", "size=" + std::to_string(m.size_bytes)}}};
    case oci_mount::kind::rw_bind:
      return {{"destination", m.target}, {"type", "bind"}, {"source", m.source},
              {"options", {"rbind", "rw", "nosuid", "nodev"}}};
    case oci_mount::kind::ro_bind:
      break;
  }
  return {{"destination", m.target}, {"type", "bind"}, {"source", m.source},
          {"options", {"rbind", "ro", "nosuid", "nodev"}}};
}

status write_file(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return make_failure(failure_kind::internal, "create " + path + ": " + std::strerror(errno));
  if (!write_all(fd, text)) {
    int err = errno;
    ::close(fd);
    return make_failure(failure_kind::internal, "write " + path + ": " + std::strerror(err));
  }
  if (::close(fd) < 0) return make_failure(failure_kind::internal, "close " + path + ": " + std::strerror(errno));
  return ok();
}

} // namespace

std::string oci_config_json(const oci_bundle_spec& spec, const std::string& rootfs) {
  const auto& p = spec.process;
  nlohmann::json mounts = nlohmann::json::array();
  // The sandbox's own kernel provides these; nothing of the host's /proc or /dev is shown.
  mounts.push_back({{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}});
  mounts.push_back({{"destination", "/dev"}, {"type", "tmpfs"}, {"source", "tmpfs"},
                    {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}});
  for (auto& m : spec.mounts) mounts.push_back(mount_json(m));

  nlohmann::json namespaces = nlohmann::json::array();
  for (const char* ns : {"pid", "ipc", "uts", "mount"}) namespaces.push_back({{"type", ns}});
  if (spec.network_namespace) namespaces.push_back({{"type", "network"}});

  nlohmann::json empty_caps = nlohmann::json::array();
  nlohmann::json config = {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", p.uid}, {"gid", p.gid}, {"additionalGids", nlohmann::json::array()}}},
        {"args", p.args},
        {"env", p.env},
        {"cwd", p.cwd},
        // No capability in any set: uid 65534 with nothing to regain.
        {"capabilities",
         {{"bounding", empty_caps}, {"effective", empty_caps}, {"inheritable", empty_caps},
          {"permitted", empty_caps}, {"ambient", empty_caps}}},
        {"rlimits",
         {{{"type", "RLIMIT_NOFILE"}, {"hard", p.nofile}, {"soft", p.nofile}},
          {{"type", "RLIMIT_CORE"}, {"hard", 0}, {"soft", 0}}}},
        {"noNewPrivileges", true}}},
      {"root", {{"path", rootfs}, {"readonly", true}}},
      {"hostname", spec.hostname},
      {"mounts", mounts},
      {"linux", {{"namespaces", namespaces}}},
  };
  return config.dump(2);
}

status write_oci_bundle(const std::string& dir, const oci_bundle_spec& spec) {
  if (::mkdir(dir.c_str(), 0700) < 0)
    return make_failure(failure_kind::internal, "mkdir " + dir + ": " + std::strerror(errno));
  // runsc creates the mount points in this (otherwise empty) directory; the sandbox sees it
  // read-only.
  std::string rootfs = dir + "/rootfs";
  if (::mkdir(rootfs.c_str(), 0755) < 0)
    return make_failure(failure_kind::internal, "mkdir " + rootfs + ": " + std::strerror(errno));
  return write_file(dir + "/config.json", oci_config_json(spec, rootfs));
}

} // namespace corral
