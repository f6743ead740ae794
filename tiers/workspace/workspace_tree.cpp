#include "tiers/workspace/workspace_tree.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "config/write_all.hpp"
#include "tiers/workspace/beneath_fd.hpp"

namespace corral {

namespace {

// The kind a caller can act on: a path that leads out or through a link is refused, one
// that names the wrong thing is a bad request, a full disk is a limit.
failure_kind kind_of(int err) {
  switch (err) {
    case EXDEV:
    case ELOOP: return failure_kind::refused;
    case ENOENT: return failure_kind::not_found;
    case ENOTDIR:
    case EISDIR:
    case EEXIST:
    case ENOTEMPTY:
    case ENAMETOOLONG:
    case ENXIO: return failure_kind::invalid_request;
    case ENOSPC:
    case EDQUOT:
    case EFBIG: return failure_kind::limit_exceeded;
  }
  return failure_kind::internal;
}

std::string why(int err) {
  if (err == EXDEV || err == ELOOP)
    return std::string(std::strerror(err)) + ": it leads outside the workspace, or through a symlink where none may be";
  return std::strerror(err);
}

failure os_failure(const char* what, const std::string& rel, int err) {
  return make_failure(kind_of(err), std::string(what) + " '" + rel + "' in the workspace: " + why(err));
}

failure not_regular(const char* what, const std::string& rel, unsigned st_mode) {
  return make_failure(failure_kind::invalid_request, std::string(what) + " '" + rel + "' in the workspace: it is a " +
                                                         file_type_name(st_mode) + ", not a regular file");
}

// rel should come from workspace_relative_path; the tree checks again because a final
// name of `..` would reach the root's parent through fstatat or renameat, which resolve
// that one component on their own.
status plain_relative(const std::string& rel) {
  if (rel == ".") return ok();
  bool plain = !rel.empty() && rel.front() != '/' && rel.find('\0') == std::string::npos;
  for (std::size_t start = 0; plain && start <= rel.size();) {
    auto slash = std::min(rel.find('/', start), rel.size());
    auto part = std::string_view(rel).substr(start, slash - start);
    plain = !part.empty() && part != "." && part != "..";
    start = slash + 1;
  }
  if (plain) return ok();
  return make_failure(failure_kind::refused, "the workspace path '" + rel +
                                                 "' is not a plain relative path (absolute, empty, '.' or '..' components)");
}

struct split_path {
  std::string parent;  // "." for an entry of the root
  std::string name;
};

// rel comes from workspace_relative_path: no empty components, no `..`, no leading slash.
split_path split(const std::string& rel) {
  auto slash = rel.rfind('/');
  if (slash == std::string::npos) return {".", rel};
  return {rel.substr(0, slash), rel.substr(slash + 1)};
}

std::string child_path(const std::string& dir, const std::string& name) { return dir == "." ? name : dir + "/" + name; }

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

tree_entry entry_of(const struct stat& st, std::string path, std::string name) {
  tree_entry e;
  e.path = std::move(path);
  e.name = std::move(name);
  e.type = file_type_name(st.st_mode);
  e.size = S_ISDIR(st.st_mode) ? 0 : static_cast<std::uint64_t>(st.st_size);
  e.mode = st.st_mode & 07777;
  e.mtime_ns = mtime_ns(st);
  return e;
}

expected<std::string> link_text(int dir, const std::string& name, const std::string& rel) {
  std::string target(PATH_MAX, '\0');
  ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
  if (n < 0) return os_failure("reading the symlink", rel, errno);
  target.resize(static_cast<std::size_t>(n));
  return target;
}

std::string temp_name() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes) {
    // Uniqueness, not secrecy: O_EXCL refuses a name that exists.
    auto t = static_cast<std::uint64_t>(::getpid()) ^ static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&bytes));
    std::memcpy(bytes, &t, sizeof bytes);
  }
  static const char hex[] = "0123456789abcdef";
  std::string name = kWriteTempPrefix;
  for (unsigned char b : bytes) {
    name += hex[b >> 4];
    name += hex[b & 15];
  }
  return name;
}

status write_fully(int fd, std::string_view data, const std::string& rel) {
  if (!write_all(fd, data)) return os_failure("writing", rel, errno != 0 ? errno : EIO);
  return ok();
}

} // namespace

expected<workspace_tree> workspace_tree::open(const std::string& host_root) {
  int fd = ::open(host_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return make_failure(failure_kind::internal, "cannot open the workspace root " + host_root + ": " + std::strerror(errno));
  workspace_tree tree(fd, host_root);
  owned_fd probe(open_beneath(fd, ".", O_PATH | O_DIRECTORY, link_policy::no_links));
  if (!probe.valid()) {
    if (errno == ENOSYS)
      return make_failure(failure_kind::tier_unavailable,
                          "this kernel has no openat2 (Linux 5.6 or later): workspace files cannot be resolved safely "
                          "beneath " + host_root);
    return make_failure(failure_kind::internal, "openat2 on the workspace root " + host_root + ": " + std::strerror(errno));
  }
  return tree;
}

workspace_tree::workspace_tree(workspace_tree&& other) noexcept
    : root_(std::exchange(other.root_, -1)), host_root_(std::move(other.host_root_)) {}

workspace_tree& workspace_tree::operator=(workspace_tree&& other) noexcept {
  if (this != &other) {
    if (root_ >= 0) ::close(root_);
    root_ = std::exchange(other.root_, -1);
    host_root_ = std::move(other.host_root_);
  }
  return *this;
}

workspace_tree::~workspace_tree() {
  if (root_ >= 0) ::close(root_);
}

expected<file_chunk> workspace_tree::read(const std::string& rel, std::uint64_t offset, std::uint64_t max_bytes) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  // O_NONBLOCK: a FIFO opens at once instead of waiting for a writer; fstat then refuses it.
  owned_fd fd(open_beneath(root_, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, link_policy::follow_inside));
  if (!fd.valid()) return os_failure("reading", rel, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return os_failure("reading", rel, errno);
  if (!S_ISREG(st.st_mode)) return not_regular("reading", rel, st.st_mode);
  file_chunk chunk;
  chunk.size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t want = offset < chunk.size ? std::min(max_bytes, chunk.size - offset) : 0;
  chunk.data.resize(want);
  std::uint64_t got = 0;
  while (got < want) {
    ssize_t n = ::pread(fd.get(), chunk.data.data() + got, want - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return os_failure("reading", rel, errno);
    if (n == 0) break;  // the file shrank since fstat
    got += static_cast<std::uint64_t>(n);
  }
  chunk.data.resize(got);
  chunk.eof = got < want || offset + got >= chunk.size;
  return chunk;
}

status workspace_tree::write(const std::string& rel, std::string_view data, mode_t mode, bool create_parents) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  if (rel == ".") return make_failure(failure_kind::invalid_request, "cannot write the workspace root: it is a directory");
  auto [parent_rel, name] = split(rel);
  if (create_parents && parent_rel != ".") {
    if (auto made = make_dir(parent_rel, 0755, true); !made) return made.error();
  }
  owned_fd parent(open_beneath(root_, parent_rel, O_PATH | O_DIRECTORY, link_policy::follow_inside));
  if (!parent.valid()) return os_failure("opening the directory of", rel, errno);
  // A new file beside the target, renamed over it: readers never see half a write, and
  // rename replaces whatever the program left at the name (a symlink too) instead of
  // opening it. O_EXCL never opens an existing entry, so a planted temp name fails.
  std::string temp = temp_name();
  owned_fd file(open_beneath(parent.get(), temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, link_policy::no_links, mode & 0777));
  if (!file.valid()) return os_failure("creating a temporary file for", rel, errno);
  auto discard = [&](failure f) -> status {
    ::unlinkat(parent.get(), temp.c_str(), 0);
    return f;
  };
  if (auto written = write_fully(file.get(), data, rel); !written) return discard(written.error());
  // The umask narrowed the mode at creation; the caller's mode (without setuid bits) rules.
  if (::fchmod(file.get(), mode & 0777) < 0) return discard(os_failure("setting the mode of", rel, errno));
  if (auto owned = own_fd(file.get(), rel); !owned) return discard(owned.error());
  // No fsync: a crash may lose the write, never tear it (ext4 flushes a file renamed over
  // another before the rename commits, auto_da_alloc), and fsync per file is slow.
  if (::renameat(parent.get(), temp.c_str(), parent.get(), name.c_str()) < 0)
    return discard(os_failure("replacing", rel, errno));
  return ok();
}

status workspace_tree::own_fd(int fd, const std::string& rel) const {
  if (owner_uid_ == static_cast<uid_t>(-1)) return ok();
  if (::fchown(fd, owner_uid_, owner_gid_) < 0) return os_failure("giving the jail's user", rel, errno);
  return ok();
}

// Right after mkdirat: were the name swapped for a link meanwhile, NOFOLLOW changes the
// link's owner, never what it points to.
status workspace_tree::own_entry(int dir, const std::string& name, const std::string& rel) const {
  if (owner_uid_ == static_cast<uid_t>(-1)) return ok();
  if (::fchownat(dir, name.c_str(), owner_uid_, owner_gid_, AT_SYMLINK_NOFOLLOW) < 0)
    return os_failure("giving the jail's user", rel, errno);
  return ok();
}

status workspace_tree::append(const std::string& rel, std::string_view data) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  // O_NOFOLLOW: the final component must be the file itself. O_NONBLOCK: a FIFO without
  // a reader fails (ENXIO) rather than waiting, one with a reader is refused by fstat.
  owned_fd fd(open_beneath(root_, rel, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
                           link_policy::follow_inside, 0644));
  if (!fd.valid()) return os_failure("appending to", rel, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0) return os_failure("appending to", rel, errno);
  if (!S_ISREG(st.st_mode)) return not_regular("appending to", rel, st.st_mode);
  if (st.st_uid == ::geteuid() && st.st_size == 0)  // made just now, most likely: the jail's
    if (auto owned = own_fd(fd.get(), rel); !owned) return owned;
  return write_fully(fd.get(), data, rel);
}

status workspace_tree::make_dir(const std::string& rel, mode_t mode, bool parents) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  if (rel == ".") {
    if (parents) return ok();
    return os_failure("making the directory", rel, EEXIST);
  }
  if (!parents) {
    auto [parent_rel, name] = split(rel);
    owned_fd parent(open_beneath(root_, parent_rel, O_PATH | O_DIRECTORY, link_policy::follow_inside));
    if (!parent.valid()) return os_failure("opening the directory of", rel, errno);
    if (::mkdirat(parent.get(), name.c_str(), mode & 0777) < 0) return os_failure("making the directory", rel, errno);
    return own_entry(parent.get(), name, rel);
  }
  // One component at a time, each prefix opened again from the root: mkdirat works on a
  // directory fd (it cannot be a link), and each open is resolved beneath the root.
  owned_fd current(open_beneath(root_, ".", O_PATH | O_DIRECTORY, link_policy::no_links));
  if (!current.valid()) return os_failure("opening the root for", rel, errno);
  std::size_t start = 0;
  while (start < rel.size()) {
    auto slash = rel.find('/', start);
    if (slash == std::string::npos) slash = rel.size();
    std::string name = rel.substr(start, slash - start);
    std::string prefix = rel.substr(0, slash);
    if (::mkdirat(current.get(), name.c_str(), mode & 0777) == 0) {
      if (auto owned = own_entry(current.get(), name, prefix); !owned) return owned;
    } else if (errno != EEXIST) {
      return os_failure("making the directory", prefix, errno);
    }
    current = owned_fd(open_beneath(root_, prefix, O_PATH | O_DIRECTORY, link_policy::follow_inside));
    if (!current.valid()) return os_failure("making the directory", prefix, errno);
    start = slash + 1;
  }
  return ok();
}

namespace {

// Removes parent/name and everything below it. Each directory is opened with no link
// allowed, so a directory swapped for a symlink is unlinked, never entered.
status remove_below(int parent, const std::string& name, const std::string& rel, unsigned depth) {
  if (depth >= max_remove_depth)
    return make_failure(failure_kind::limit_exceeded, "removing '" + rel + "' in the workspace: it is nested deeper than " +
                                                          std::to_string(max_remove_depth) + " levels (max_remove_depth)");
  owned_fd dir(open_beneath(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, link_policy::no_links));
  if (!dir.valid()) {
    if (errno == ENOENT) return ok();
    if (errno != ELOOP && errno != ENOTDIR) return os_failure("removing", rel, errno);
    if (::unlinkat(parent, name.c_str(), 0) < 0 && errno != ENOENT) return os_failure("removing", rel, errno);
    return ok();
  }
  // Names come in batches (a huge directory is not read into memory at once); the program
  // may keep adding entries while we remove, so the batches are bounded and a directory
  // still not empty after a few full passes is reported.
  constexpr int full_passes = 4;
  constexpr int max_batches = 4096;
  int passes = 0;
  for (int batch = 0; batch < max_batches && passes < full_passes; ++batch) {
    bool more = false;
    auto names = directory_names(dir.get(), 4096, more);
    if (!names) return make_failure(names.error().kind, "removing '" + rel + "': " + names.error().message);
    for (auto& n : *names) {
      if (::unlinkat(dir.get(), n.c_str(), 0) == 0 || errno == ENOENT) continue;
      if (errno != EISDIR) return os_failure("removing", rel + "/" + n, errno);
      if (auto gone = remove_below(dir.get(), n, rel + "/" + n, depth + 1); !gone) return gone;
    }
    if (more) continue;
    ++passes;
    if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return ok();
    if (errno != ENOTEMPTY) return os_failure("removing", rel, errno);
  }
  return make_failure(failure_kind::internal, "removing '" + rel + "' in the workspace: entries kept appearing in it");
}

} // namespace

status workspace_tree::remove(const std::string& rel, bool recursive) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  if (rel == ".") return make_failure(failure_kind::invalid_request, "the workspace root itself cannot be removed");
  auto [parent_rel, name] = split(rel);
  owned_fd parent(open_beneath(root_, parent_rel, O_PATH | O_DIRECTORY, link_policy::follow_inside));
  if (!parent.valid()) return os_failure("opening the directory of", rel, errno);
  // unlinkat removes a symlink itself; Linux answers EISDIR for a directory.
  if (::unlinkat(parent.get(), name.c_str(), 0) == 0) return ok();
  if (errno != EISDIR) return os_failure("removing", rel, errno);
  if (!recursive) {
    if (::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) < 0) return os_failure("removing the directory", rel, errno);
    return ok();
  }
  return remove_below(parent.get(), name, rel, 0);
}

status workspace_tree::move(const std::string& from, const std::string& to) const {
  for (auto* rel : {&from, &to})
    if (auto plain = plain_relative(*rel); !plain) return plain.error();
  if (from == "." || to == ".") return make_failure(failure_kind::invalid_request, "the workspace root itself cannot be moved");
  auto [from_dir, from_name] = split(from);
  auto [to_dir, to_name] = split(to);
  owned_fd source(open_beneath(root_, from_dir, O_PATH | O_DIRECTORY, link_policy::follow_inside));
  if (!source.valid()) return os_failure("opening the directory of", from, errno);
  owned_fd target(open_beneath(root_, to_dir, O_PATH | O_DIRECTORY, link_policy::follow_inside));
  if (!target.valid()) return os_failure("opening the directory of", to, errno);
  if (::renameat(source.get(), from_name.c_str(), target.get(), to_name.c_str()) < 0)
    return make_failure(kind_of(errno), "moving '" + from + "' to '" + to + "' in the workspace: " + why(errno));
  return ok();
}

expected<tree_entry> workspace_tree::stat(const std::string& rel) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  struct stat st {};
  if (rel == ".") {
    if (::fstat(root_, &st) < 0) return os_failure("looking at", rel, errno);
    return entry_of(st, ".", ".");
  }
  auto [parent_rel, name] = split(rel);
  owned_fd parent(open_beneath(root_, parent_rel, O_PATH | O_DIRECTORY, link_policy::follow_inside));
  if (!parent.valid()) return os_failure("opening the directory of", rel, errno);
  if (::fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return os_failure("looking at", rel, errno);
  auto entry = entry_of(st, rel, name);
  if (S_ISLNK(st.st_mode)) {
    auto target = link_text(parent.get(), name, rel);
    if (!target) return target.error();
    entry.symlink_target = std::move(*target);
  }
  return entry;
}

namespace {

struct lister {
  std::size_t max_entries;
  unsigned depth;
  tree_listing out;

  status walk(int dir, const std::string& prefix, unsigned level) {
    bool more = false;
    // One name past the bound is enough to know the listing is cut.
    auto names = directory_names(dir, names_for(max_entries, out.entries.size()), more);
    if (!names) return make_failure(names.error().kind, "listing '" + prefix + "': " + names.error().message);
    std::sort(names->begin(), names->end());
    for (auto& name : *names) {
      if (out.entries.size() == max_entries) {
        out.truncated = true;
        return ok();
      }
      struct stat st {};
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) continue;  // removed since readdir
        return os_failure("listing", child_path(prefix, name), errno);
      }
      auto entry = entry_of(st, child_path(prefix, name), name);
      if (S_ISLNK(st.st_mode)) {
        auto target = link_text(dir, name, entry.path);
        if (target) entry.symlink_target = std::move(*target);
      }
      std::string path = entry.path;
      out.entries.push_back(std::move(entry));
      if (!S_ISDIR(st.st_mode) || level + 1 >= depth) continue;
      // No link on the way down: a directory swapped for a symlink is listed, not entered.
      owned_fd child(open_beneath(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, link_policy::no_links));
      if (!child.valid()) continue;
      if (auto deeper = walk(child.get(), path, level + 1); !deeper) return deeper;
      if (out.truncated) return ok();
    }
    if (more) out.truncated = true;
    return ok();
  }
};

} // namespace

expected<tree_listing> workspace_tree::list(const std::string& rel, unsigned depth, std::size_t max_entries) const {
  if (auto plain = plain_relative(rel); !plain) return plain.error();
  if (depth == 0 || depth > max_list_depth)
    return make_failure(failure_kind::invalid_request, "listing '" + rel + "': depth " + std::to_string(depth) +
                                                           " is outside 1.." + std::to_string(max_list_depth));
  owned_fd dir(open_beneath(root_, rel, O_RDONLY | O_DIRECTORY, link_policy::follow_inside));
  if (!dir.valid()) return os_failure("listing", rel, errno);
  lister l{max_entries, depth, {}};
  if (auto walked = l.walk(dir.get(), rel, 0); !walked) return walked.error();
  return std::move(l.out);
}

} // namespace corral
