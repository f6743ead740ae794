#include "tiers/microvm/guest_trees.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "config/write_all.hpp"

namespace corral {

namespace {

constexpr uid_t kNobody = 65534;

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

status make_dirs(const std::string& path) {
  for (auto at = path.find('/', 1);; at = path.find('/', at + 1)) {
    auto part = path.substr(0, at);
    if (::mkdir(part.c_str(), 0755) < 0 && errno != EEXIST) return make_failure(failure_kind::spawn_failed, errno_text("mkdir " + part));
    if (at == std::string::npos) break;
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) < 0 || !S_ISDIR(st.st_mode))
    return make_failure(failure_kind::spawn_failed, path + " is not a directory");
  return ok();
}

std::size_t depth(const std::string& path) { return static_cast<std::size_t>(std::count(path.begin(), path.end(), '/')); }

} // namespace

guest_trees::guest_trees(const guest_request& request, std::string prefix, bool in_guest)
    : request_(request), prefix_(std::move(prefix)), in_guest_(in_guest) {
  for (std::size_t i = 0; i < request_.files.size(); ++i)
    copied_[{request_.files[i].tree, request_.files[i].path}] = i;
}

bool guest_trees::is_tree(const std::string& guest_path) const {
  return std::any_of(request_.trees.begin(), request_.trees.end(), [&](auto& t) { return t.path == guest_path; });
}

status guest_trees::set_up() {
  // Parents before children: a tree inside another is mounted over the outer one's copy.
  std::vector<std::size_t> order(request_.trees.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return depth(request_.trees[a].path) < depth(request_.trees[b].path); });
  for (auto i : order)
    if (auto r = fill(i); !r) return r;
  // Read-only last, once every tree inside has its mount point.
  for (auto i : order) {
    auto& t = request_.trees[i];
    if (t.writable || !in_guest_) continue;
    if (::mount(nullptr, t.path.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) < 0)
      return make_failure(failure_kind::spawn_failed, errno_text("remount " + t.path + " read-only"));
  }
  return ok();
}

status guest_trees::fill(std::size_t tree) {
  auto& t = request_.trees[tree];
  auto base = local(t.path);
  if (auto r = make_dirs(base); !r) return r;
  if (in_guest_ && ::mount("tmpfs", base.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
    return make_failure(failure_kind::spawn_failed, errno_text("mount a tmpfs on " + t.path));
  auto own = [&](const std::string& path) {
    // The program (nobody) owns what it may change; root keeps the read-only copy.
    return !in_guest_ || !t.writable || ::lchown(path.c_str(), kNobody, kNobody) == 0;
  };
  if (!own(base)) return make_failure(failure_kind::spawn_failed, errno_text("chown " + t.path));
  for (auto& f : request_.files) {
    if (f.tree != tree) continue;
    auto path = base + "/" + f.path;
    bool made = false;
    if (f.kind == entry_kind::directory) {
      made = ::mkdir(path.c_str(), f.mode & 0777) == 0 || errno == EEXIST;
      if (made) ::chmod(path.c_str(), f.mode & 0777);  // mkdir's mode passes the umask
    } else if (f.kind == entry_kind::symlink) {
      made = ::symlink(f.content.c_str(), path.c_str()) == 0;
    } else {
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, f.mode & 0777);
      made = fd >= 0 && write_all(fd, f.content) && ::fchmod(fd, f.mode & 0777) == 0;
      if (fd >= 0) ::close(fd);
    }
    if (!made || !own(path)) return make_failure(failure_kind::spawn_failed, errno_text("copy " + t.path + "/" + f.path));
  }
  return ok();
}

void guest_trees::walk(std::size_t tree, const std::string& rel, dev_t device, std::map<std::string, entry_kind>& seen,
                       std::size_t& skipped) const {
  auto dir_path = local(request_.trees[tree].path) + (rel.empty() ? "" : "/" + rel);
  DIR* d = ::opendir(dir_path.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (auto& name : names) {
    auto path = rel.empty() ? name : rel + "/" + name;
    auto guest_path = request_.trees[tree].path + "/" + path;
    struct stat st {};
    if (::lstat((dir_path + "/" + name).c_str(), &st) < 0) continue;
    // Another tree mounted inside this one is that tree's business.
    if (S_ISDIR(st.st_mode) && (st.st_dev != device || is_tree(guest_path))) continue;
    if (S_ISDIR(st.st_mode)) {
      seen[path] = entry_kind::directory;
      walk(tree, path, device, seen, skipped);
    } else if (S_ISREG(st.st_mode)) {
      seen[path] = entry_kind::file;
    } else {
      auto was = copied_.find({tree, path});
      // A symlink that came in and is still there stays as it is on the host.
      if (S_ISLNK(st.st_mode) && was != copied_.end() && request_.files[was->second].kind == entry_kind::symlink)
        seen[path] = entry_kind::symlink;
      else
        ++skipped;
    }
  }
}

bool guest_trees::unchanged_file(std::size_t tree, const std::string& rel, const guest_file& original,
                                 std::uint32_t mode) const {
  if (original.kind != entry_kind::file || original.mode != mode) return false;
  int fd = ::open((local(request_.trees[tree].path) + "/" + rel).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool same = ::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) == original.content.size();
  std::string content;
  if (same) {
    content.resize(original.content.size());
    std::size_t got = 0;
    ssize_t n = 0;
    while (got < content.size() && (n = ::read(fd, content.data() + got, content.size() - got)) > 0)
      got += static_cast<std::size_t>(n);
    same = got == content.size() && content == original.content;
  }
  ::close(fd);
  return same;
}

void guest_trees::send_file(std::size_t tree, const std::string& rel, std::uint32_t mode, const sender& send) const {
  int fd = ::open((local(request_.trees[tree].path) + "/" + rel).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  guest_file chunk{static_cast<std::uint32_t>(tree), rel, entry_kind::file, mode, 0, {}};
  std::string buf(kWriteBackChunk, '\0');
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 && chunk.offset > 0) break;  // an empty file still gets its one frame
    chunk.content.assign(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
    send(frame_type::written, encode_file(chunk));
    if (n <= 0) break;
    chunk.offset += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
}

void guest_trees::report_changes(const sender& send) const {
  for (std::size_t tree = 0; tree < request_.trees.size(); ++tree) {
    auto& t = request_.trees[tree];
    if (!t.writable) continue;
    struct stat root {};
    if (::stat(local(t.path).c_str(), &root) < 0) continue;
    std::map<std::string, entry_kind> seen;
    std::size_t skipped = 0;
    walk(tree, "", root.st_dev, seen, skipped);

    // Gone, or replaced by another kind: removed on the host, children before parents.
    std::vector<const guest_file*> removed;
    for (auto& [key, index] : copied_) {
      if (key.first != tree) continue;
      auto now = seen.find(key.second);
      if (now == seen.end() || now->second != request_.files[index].kind) removed.push_back(&request_.files[index]);
    }
    std::stable_sort(removed.begin(), removed.end(), [](auto a, auto b) { return depth(a->path) > depth(b->path); });
    for (auto* f : removed) {
      guest_file gone{static_cast<std::uint32_t>(tree), f->path, f->kind, 0, 0, {}};
      send(frame_type::removed, encode_file(gone));
    }
    // `seen` is ordered by path, so a directory comes before what it holds.
    for (auto& [path, kind] : seen) {
      if (kind == entry_kind::symlink) continue;
      struct stat st {};
      if (::lstat((local(t.path) + "/" + path).c_str(), &st) < 0) continue;
      auto mode = static_cast<std::uint32_t>(st.st_mode & 0777);
      auto was = copied_.find({tree, path});
      bool existed = was != copied_.end() && request_.files[was->second].kind == kind;
      if (kind == entry_kind::directory) {
        if (!existed) send(frame_type::written, encode_file({static_cast<std::uint32_t>(tree), path, kind, mode, 0, {}}));
      } else if (!existed || !unchanged_file(tree, path, request_.files[was->second], mode)) {
        send_file(tree, path, mode, send);
      }
    }
    if (skipped)
      send(frame_type::err, "corral-microvm-agent: " + std::to_string(skipped) + " symlink(s) or special file(s) in " +
                                t.path + " were not copied back: only files and directories return to the host\n");
  }
}

} // namespace corral
