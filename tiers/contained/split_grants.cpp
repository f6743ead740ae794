#include "tiers/contained/split_grants.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include "tiers/jail/system_view.hpp"

namespace corral {

namespace {

struct splitter {
  bool writable;
  const std::vector<path_mask>& masks;
  std::vector<landlock_rule>& rules;
  std::vector<std::string>& split;

  const path_mask* mask_at(const std::string& path) const {
    for (auto& m : masks)
      if (m.host_path == path) return &m;
    return nullptr;
  }
  bool holds_mask(const std::string& dir) const {
    for (auto& m : masks)
      if (m.host_path != dir && is_under(m.host_path, dir)) return true;
    return false;
  }

  void grant(const std::string& path) {
    if (auto* m = mask_at(path)) {
      if (m->kind == mask_kind::read_only) rules.push_back({path, false});
      return;  // hidden: no rule at all
    }
    if (!holds_mask(path)) {
      rules.push_back({path, writable});
      return;
    }
    rules.push_back({path, false, true});
    split.push_back(path);
    DIR* dir = ::opendir(path.c_str());
    if (!dir) return;
    std::vector<std::string> entries;
    while (auto* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      entries.push_back(path + "/" + name);
    }
    ::closedir(dir);
    for (auto& entry : entries) {
      struct stat st {};
      // A rule is made on what its path opens to: a link's target may lie anywhere.
      if (::lstat(entry.c_str(), &st) < 0 || S_ISLNK(st.st_mode)) continue;
      grant(entry);
    }
  }
};

} // namespace

std::vector<landlock_rule> split_root_rules(const std::string& root, bool writable, const std::vector<path_mask>& masks,
                                            std::vector<std::string>& split) {
  std::vector<landlock_rule> rules;
  // A read-only root's read-only masks change nothing; only what must be hidden splits it.
  std::vector<path_mask> relevant;
  for (auto& m : masks)
    if ((writable || m.kind == mask_kind::hidden) && (m.host_path == root || is_under(m.host_path, root)))
      relevant.push_back(m);
  splitter s{writable, relevant, rules, split};
  s.grant(root);
  return rules;
}

} // namespace corral
