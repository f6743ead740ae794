#include "tiers/workspace/snapshot_archive.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/write_all.hpp"
#include "tiers/workspace/beneath_fd.hpp"
#include "tiers/workspace/tar_format.hpp"

namespace corral {

namespace {

constexpr std::size_t kCopyBuffer = 256 * 1024;
constexpr std::uint32_t kKeptModeBits = 01777;  // no setuid, no setgid

failure archive_failure(const std::string& path, const std::string& why) {
  return make_failure(failure_kind::internal, "archiving '" + path + "': " + why);
}

failure extract_failure(const std::string& path, const std::string& why) {
  return make_failure(failure_kind::invalid_request, "restoring '" + path + "': " + why);
}

// A file's bytes, exactly as many as the manifest saw: a file that grew or shrank since
// means the tree was not quiet, and the archive would not be one instant of it.
status copy_file(const workspace_tree& tree, const manifest_entry& e, zstd_writer& out) {
  owned_fd fd(open_beneath(tree.root_fd(), e.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, link_policy::no_links));
  if (!fd.valid()) return archive_failure(e.path, std::string("open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) < 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) != e.size)
    return archive_failure(e.path, "it changed while it was archived");
  std::vector<char> buffer(kCopyBuffer);
  std::uint64_t left = e.size;
  while (left > 0) {
    ssize_t n = ::read(fd.get(), buffer.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size())));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return archive_failure(e.path, std::string("read: ") + std::strerror(errno));
    if (n == 0) return archive_failure(e.path, "it changed while it was archived");
    if (auto s = out.write(std::string_view(buffer.data(), static_cast<std::size_t>(n))); !s) return s;
    left -= static_cast<std::uint64_t>(n);
  }
  return out.write(tar_padding(e.size));
}

struct made_dir {
  std::string path;
  std::uint32_t mode;
  std::int64_t mtime_ns;
};

timespec as_timespec(std::int64_t ns) {
  timespec t{};
  t.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  t.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  if (t.tv_nsec < 0) {
    t.tv_nsec += 1'000'000'000;
    t.tv_sec -= 1;
  }
  return t;
}

class extractor {
public:
  extractor(int fd, int root, const extract_bounds& bounds) : in_(fd), root_(root), bounds_(bounds) {}

  expected<std::size_t> run() {
    tar_source source = [this](char* out, std::size_t n) { return in_.read_exact(out, n); };
    std::size_t made = 0;
    for (;;) {
      auto header = read_tar_header(source);
      if (!header) return header.error();
      if (!*header) break;
      if (++made > bounds_.max_entries)
        return extract_failure((*header)->path, "the archive holds more than " + std::to_string(bounds_.max_entries) + " entries");
      if (auto s = make(**header); !s) return s.error();
    }
    auto end = in_.at_end();
    if (!end) return end.error();
    if (!*end) return make_failure(failure_kind::invalid_request, "snapshot archive: bytes follow its end");
    // Last, deepest first: a read-only directory is filled before its mode closes it.
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
      owned_fd dir(open_beneath(root_, it->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, link_policy::no_links));
      timespec times[2] = {as_timespec(it->mtime_ns), as_timespec(it->mtime_ns)};
      if (!dir.valid() || ::fchmod(dir.get(), it->mode) < 0 || ::futimens(dir.get(), times) < 0)
        return extract_failure(it->path, std::string("setting its mode and time: ") + std::strerror(errno));
    }
    return made;
  }

private:
  // The entry's directory, which must be one this extraction made (or the root).
  expected<owned_fd> parent_of(const std::string& path, std::string& name) {
    auto slash = path.rfind('/');
    name = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
    owned_fd dir(open_beneath(root_, parent, O_PATH | O_DIRECTORY | O_NOFOLLOW, link_policy::no_links));
    if (!dir.valid()) return extract_failure(path, "its directory '" + parent + "' is not one the archive made before it");
    return dir;
  }

  status own(int dir, const std::string& name, const std::string& path) {
    if (bounds_.owner_uid == static_cast<uid_t>(-1)) return ok();
    if (::fchownat(dir, name.c_str(), bounds_.owner_uid, bounds_.owner_gid, AT_SYMLINK_NOFOLLOW) < 0)
      return extract_failure(path, std::string("chown: ") + std::strerror(errno));
    return ok();
  }

  status make(const tar_entry& e) {
    std::string name;
    auto dir = parent_of(e.path, name);
    if (!dir) return dir.error();
    int at = dir->get();
    switch (e.type) {
      case tar_entry::kind::dir:
        if (::mkdirat(at, name.c_str(), 0700) < 0) return extract_failure(e.path, std::string("mkdir: ") + std::strerror(errno));
        dirs_.push_back({e.path, e.mode & kKeptModeBits, e.mtime_ns});
        return own(at, name, e.path);
      case tar_entry::kind::symlink: {
        if (::symlinkat(e.link_target.c_str(), at, name.c_str()) < 0)
          return extract_failure(e.path, std::string("symlink: ") + std::strerror(errno));
        if (auto s = own(at, name, e.path); !s) return s;
        timespec times[2] = {as_timespec(e.mtime_ns), as_timespec(e.mtime_ns)};
        if (::utimensat(at, name.c_str(), times, AT_SYMLINK_NOFOLLOW) < 0)
          return extract_failure(e.path, std::string("utimensat: ") + std::strerror(errno));
        return ok();
      }
      case tar_entry::kind::file:
        return make_file(at, name, e);
    }
    return ok();
  }

  status make_file(int at, const std::string& name, const tar_entry& e) {
    if (e.size > bounds_.max_bytes - bytes_)
      return extract_failure(e.path, "the files hold more than " + std::to_string(bounds_.max_bytes) + " bytes");
    bytes_ += e.size;
    // O_EXCL with O_NOFOLLOW: an entry twice, or a name a symlink already holds, fails.
    owned_fd fd(::openat(at, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return extract_failure(e.path, std::string("create: ") + std::strerror(errno));
    if (auto s = own(at, name, e.path); !s) return s;
    std::vector<char> buffer(kCopyBuffer);
    for (std::uint64_t left = e.size; left > 0;) {
      auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
      if (auto s = in_.read_exact(buffer.data(), n); !s) return s;
      if (!write_all(fd.get(), std::string_view(buffer.data(), n)))
        return extract_failure(e.path, std::string("write: ") + std::strerror(errno));
      left -= n;
    }
    std::string pad = tar_padding(e.size);
    if (auto s = in_.read_exact(pad.data(), pad.size()); !s) return s;
    timespec times[2] = {as_timespec(e.mtime_ns), as_timespec(e.mtime_ns)};
    if (::fchmod(fd.get(), e.mode & kKeptModeBits) < 0 || ::futimens(fd.get(), times) < 0)
      return extract_failure(e.path, std::string("setting its mode and time: ") + std::strerror(errno));
    return ok();
  }

  zstd_reader in_;
  int root_;
  extract_bounds bounds_;
  std::uint64_t bytes_ = 0;
  std::vector<made_dir> dirs_;
};

} // namespace

expected<archive_summary> write_archive(const workspace_tree& tree, const std::vector<manifest_entry>& manifest, int fd) {
  zstd_writer out(fd);
  archive_summary summary;
  for (auto& m : manifest) {
    tar_entry e;
    e.path = m.path;
    e.mode = m.mode & kKeptModeBits;
    e.mtime_ns = m.mtime_ns;
    switch (m.type) {
      case 'd': e.type = tar_entry::kind::dir; break;
      case 'l':
        e.type = tar_entry::kind::symlink;
        e.link_target = m.link_target;
        break;
      case 'f':
        e.type = tar_entry::kind::file;
        e.size = m.size;
        break;
      default:
        summary.skipped.push_back(m.path);
        continue;
    }
    if (auto s = out.write(tar_header(e)); !s) return s.error();
    if (m.type == 'f') {
      if (auto s = copy_file(tree, m, out); !s) return s.error();
      summary.content_bytes += m.size;
    }
    ++summary.entries;
  }
  if (auto s = out.write(tar_end()); !s) return s.error();
  auto file = out.finish();
  if (!file) return file.error();
  summary.file = std::move(*file);
  return summary;
}

expected<std::size_t> extract_archive(int fd, int root_fd, const extract_bounds& bounds) {
  return extractor(fd, root_fd, bounds).run();
}

} // namespace corral
