#include "actors/workspaces/workspace_files.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/all.hpp>

#include "actors/workspaces/workspace_snapshots.hpp"
#include "config/replace_file.hpp"
#include "tiers/jail/landlock_tier.hpp"
#include "tiers/workspace/workspace_path.hpp"

namespace corral {

namespace {

file_reply refused(failure f) { return file_reply{false, std::move(f), {}, {}, {}}; }

changes_reply changes_failed(failure f) {
  changes_reply r;
  r.error = std::move(f);
  return r;
}

// A root runtime's jail runs as nobody: what the API creates must be that user's, or the
// program could not change it.
expected<workspace_tree> open_tree(const workspace_paths& at) {
  auto tree = workspace_tree::open(at.root);
  if (!tree) return tree;
  if (::geteuid() == 0) tree->give_new_entries_to(kLandlockJailUser, kLandlockJailUser);
  return tree;
}

// Marks are named by the caller: a name, never a path.
bool valid_mark(const std::string& label) {
  if (label.empty() || label.size() > 63) return false;
  for (char c : label)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) return false;
  return label[0] != '.';
}

expected<std::vector<manifest_entry>> read_mark(const workspace_paths& at, const std::string& label) {
  std::ifstream in(at.marks + "/" + label + ".manifest", std::ios::binary);
  if (!in) return make_failure(failure_kind::not_found, "no mark '" + label + "' in this workspace");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_manifest(text.str());
}

status write_mark(const workspace_paths& at, const std::string& label, const std::vector<manifest_entry>& m) {
  if (::mkdir(at.marks.c_str(), 0700) < 0 && errno != EEXIST)
    return make_failure(failure_kind::internal, "mkdir " + at.marks + ": " + std::strerror(errno));
  auto path = at.marks + "/" + label + ".manifest";
  // Two file workers may mark at once: each its own temp.
  auto temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(::gettid());
  if (!replace_file(path, temp, serialize_manifest(m), false))
    return make_failure(failure_kind::internal, "writing " + path + ": " + std::strerror(errno));
  return ok();
}

std::size_t user_marks(const workspace_paths& at) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto& e : std::filesystem::directory_iterator(at.marks, ec))
    if (e.path().extension() == ".manifest" && e.path().stem() != "creation") ++n;
  return n;
}

} // namespace

file_reply run_file_call(const workspace_paths& at, const file_call& call) {
  auto tree = open_tree(at);
  if (!tree) return refused(tree.error());
  auto rel = workspace_relative_path(call.path, at.mount_at);
  if (!rel) return refused(rel.error());
  file_reply r;
  auto done = [&](status s) {
    if (!s) return refused(s.error());
    r.ok = true;
    return r;
  };
  // A change answers with the entry as it now is (an append's new size, a move's target).
  auto done_at = [&](status s, const std::string& now_at) {
    if (!s) return refused(s.error());
    if (auto entry = tree->stat(now_at)) r.entry = std::move(*entry);
    r.ok = true;
    return r;
  };
  auto too_big = [&](std::size_t n) {
    return refused(make_failure(failure_kind::limit_exceeded, "one call carries at most " + std::to_string(kMaxFilePiece) +
                                                                  " bytes of a file, not " + std::to_string(n) +
                                                                  "; send the rest with append"));
  };
  using op = file_call::op;
  switch (call.what) {
    case op::read: {
      auto chunk = tree->read(*rel, call.offset, std::min<std::uint64_t>(call.length, kMaxFilePiece));
      if (!chunk) return refused(chunk.error());
      r.chunk = std::move(*chunk);
      return done(ok());
    }
    case op::write:
      if (call.data.size() > kMaxFilePiece) return too_big(call.data.size());
      return done_at(tree->write(*rel, call.data, call.mode, call.parents), *rel);
    case op::append:
      if (call.data.size() > kMaxFilePiece) return too_big(call.data.size());
      return done_at(tree->append(*rel, call.data), *rel);
    case op::list: {
      auto listing = tree->list(*rel, call.depth, call.max_entries);
      if (!listing) return refused(listing.error());
      r.listing = std::move(*listing);
      return done(ok());
    }
    case op::stat: {
      auto entry = tree->stat(*rel);
      if (!entry) return refused(entry.error());
      r.entry = std::move(*entry);
      return done(ok());
    }
    case op::mkdir:
      return done_at(tree->make_dir(*rel, call.mode, call.parents), *rel);
    case op::remove:
      if (*rel == ".") return refused(make_failure(failure_kind::refused, "the workspace root itself cannot be removed"));
      return done(tree->remove(*rel, call.recursive));
    case op::move: {
      auto to = workspace_relative_path(call.to, at.mount_at);
      if (!to) return refused(to.error());
      return done_at(tree->move(*rel, *to), *to);
    }
  }
  return refused(make_failure(failure_kind::invalid_request, "unknown file operation"));
}

workspace_paths workspace_layout(const std::string& dir) {
  return {dir + "/root", dir + "/marks", kWorkspaceMountAt, dir + "/hashcache"};
}

workspace_paths workspace_layout_of_root(const std::string& root) {
  return workspace_layout(std::filesystem::path(root).parent_path().string());
}

expected<std::vector<manifest_entry>> scan_files(const workspace_tree& tree, const workspace_paths& at) {
  if (at.hashes.empty()) return scan_tree(tree, kMaxTreeEntries);
  hash_cache cache(at.hashes);
  auto now = scan_tree(tree, kMaxTreeEntries, &cache);
  if (now) cache.save();
  return now;
}

changes_reply set_mark(const workspace_paths& at, const std::string& label) {
  if (!valid_mark(label))
    return changes_failed(make_failure(failure_kind::invalid_request,
                                       "mark name '" + label + "' is not valid: 1 to 63 of a-z 0-9 . _ -"));
  if (label != "creation" && user_marks(at) >= kMaxMarks)
    if (!std::filesystem::exists(at.marks + "/" + label + ".manifest"))
      return changes_failed(make_failure(failure_kind::limit_exceeded,
                                         "at most " + std::to_string(kMaxMarks) + " marks per workspace"));
  auto tree = open_tree(at);
  if (!tree) return changes_failed(tree.error());
  auto now = scan_files(*tree, at);
  if (!now) return changes_failed(now.error());
  if (auto s = write_mark(at, label, *now); !s) return changes_failed(s.error());
  changes_reply r;
  r.ok = true;
  r.mark = label;
  r.scanned = now->size();
  return r;
}

changes_reply changes_since(const workspace_paths& at, const std::string& since) {
  if (!valid_mark(since))
    return changes_failed(make_failure(failure_kind::invalid_request, "mark name '" + since + "' is not valid"));
  auto before = read_mark(at, since);
  if (!before) return changes_failed(before.error());
  auto r = changes_against(at, *before);
  r.mark = since;
  return r;
}

tree_manifest scan_workspace(const workspace_paths& at) {
  auto tree = open_tree(at);
  if (!tree) return {false, tree.error(), nullptr};
  auto now = scan_files(*tree, at);
  if (!now) return {false, now.error(), nullptr};
  return {true, {}, std::make_shared<const std::vector<manifest_entry>>(std::move(*now))};
}

changes_reply changes_against(const workspace_paths& at, const std::vector<manifest_entry>& before) {
  auto tree = open_tree(at);
  if (!tree) return changes_failed(tree.error());
  auto now = scan_files(*tree, at);
  if (!now) return changes_failed(now.error());
  changes_reply r;
  r.ok = true;
  r.scanned = now->size();
  r.changes = diff_manifests(before, *now, kMaxChanges, r.truncated);
  return r;
}

caf::actor spawn_file_worker(caf::actor_system& system, workspace_paths at) {
  // The paths go in as a spawn argument, not a capture: CAF 0.17 dereferences a null argument
  // tuple for an init function spawned with none (UBSan reports it).
  return system.spawn<caf::detached>([](caf::event_based_actor* self, workspace_paths at) -> caf::behavior {
    return {
        [=](ws_files_atom, file_call& call) {
          self->quit();
          return run_file_call(at, call);
        },
        [=](ws_mark_atom, std::string& label) {
          self->quit();
          return set_mark(at, label);
        },
        [=](ws_changes_atom, std::string& since) {
          self->quit();
          return changes_since(at, since);
        },
        [=](ws_scan_atom) {
          self->quit();
          return scan_workspace(at);
        },
        [=](ws_diff_atom, const tree_manifest& before) {
          self->quit();
          return changes_against(at, before.entries ? *before.entries : std::vector<manifest_entry>{});
        },
        [=](ws_snap_atom, snapshot_job& job) {
          self->quit();
          return take_snapshot(at, std::move(job));
        },
        [=](ws_restore_atom, const std::string& snapshots_dir, const std::string& id) {
          self->quit();
          return restore_snapshot(at, snapshots_dir, id);
        },
    };
  }, std::move(at));
}

} // namespace corral
