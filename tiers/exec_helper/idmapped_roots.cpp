#include "tiers/exec_helper/idmapped_roots.hpp"

#include <cerrno>
#include <map>
#include <unistd.h>
#include <utility>

#include "tiers/exec_helper/status_writer.hpp"
#include "tiers/jail/idmapped_mount.hpp"

namespace corral::helper {

int prepare_idmapped_trees(const jail_spec& spec, std::vector<int>& trees) {
  trees.assign(spec.mounts.size(), -1);
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> namespaces;  // one per owner
  int result = 0;
  for (std::size_t i = 0; i < spec.mounts.size() && result == 0; ++i) {
    const auto& m = spec.mounts[i];
    if (!m.idmapped || m.kind != mount_kind::rw_bind) continue;
    std::string error;
    auto owner = std::make_pair(m.owner_uid, m.owner_gid);
    auto found = namespaces.find(owner);
    int ns = found != namespaces.end()
                 ? found->second
                 : open_idmap_userns(m.owner_uid, m.owner_gid, spec.uid_outside, spec.gid_outside, error);
    if (ns < 0) {
      result = errno ? errno : EINVAL;
      report_failed(result, "idmap", "a user namespace for the owner of " + m.source + ": " + error);
      break;
    }
    namespaces[owner] = ns;
    trees[i] = open_idmapped_tree(m.source, ns, error);
    if (trees[i] < 0) {
      result = errno ? errno : EINVAL;
      report_failed(result, "idmap", error);
    }
  }
  for (auto& [_, ns] : namespaces) ::close(ns);
  if (result) close_trees(trees);
  return result;
}

void close_trees(std::vector<int>& trees) {
  for (int& fd : trees)
    if (fd >= 0) ::close(fd), fd = -1;
}

} // namespace corral::helper
