#include "config/toml/toml_profile.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include "config/protected_paths.hpp"
#include "config/root_layout.hpp"
#include "config/toml/profile_schema.hpp"
#include "config/toml/toml_reader.hpp"
#include "config/toml/toml_text.hpp"

namespace corral {

namespace fs = std::filesystem;

namespace {

// A config file is a few kilobytes; anything this large is a mistake, not a profile.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

expected<profile> load_text(std::string_view text, const std::string& source, const std::string& base_dir,
                            const std::string& config_path, const std::string& project_dir) {
  // toml++ reports a NUL too, but as a confusing parse error inside whatever it was reading.
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return make_failure(failure_kind::config_error,
                        source + ":" + line_column(text, nul) +
                            ": the file contains a NUL byte; a config file must be UTF-8 text");
  // The stand-ins must be unambiguous; a private-use character has no place in a profile.
  if (auto at = find_stand_in(text); at != std::string_view::npos)
    return make_failure(failure_kind::config_error,
                        source + ":" + line_column(text, at) +
                            ": private-use character in the file; a config file holds no such characters");
  toml::table doc;
  try {
    doc = toml::parse(to_toml_text(text), std::string(source));
  } catch (const toml::parse_error& e) {
    std::string what = from_toml(e.description());
    auto pos = e.source().begin;
    std::string at = source + (pos ? ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) : "");
    if (what.find("utf-8") != std::string::npos || what.find("UTF-8") != std::string::npos)
      what += " (a config file must be UTF-8 text)";
    return make_failure(failure_kind::config_error, at + ": " + what);
  }
  profile p;
  p.config_path = config_path;
  reader r(source, base_dir);
  read_profile_document(r, doc, p);
  if (r.error()) return *r.error();
  if (auto s = check_root_layout(p); !s) return make_failure(failure_kind::config_error, source + ": " + s.error().message);
  if (auto s = mask_protected(p, {(fs::path(project_dir) / ".git").string()}); !s)
    return make_failure(failure_kind::config_error, source + ": " + s.error().message);
  return p;
}

std::string working_directory() {
  char cwd[4096];
  return ::getcwd(cwd, sizeof cwd) ? cwd : ".";
}

} // namespace

expected<profile> load_profile_from_string(std::string_view text, std::string_view source_name,
                                           const std::string& project_dir) {
  return load_text(text, std::string(source_name), project_dir, "", project_dir);
}

expected<profile> load_profile(const std::string& config_path, const std::string& project_dir) {
  const bool explicit_path = !config_path.empty();
  const std::string path = explicit_path ? config_path : (fs::path(project_dir) / "corral.toml").string();
  auto fail = [&](const std::string& why) {
    return make_failure(failure_kind::config_error, "config file " + path + ": " + why);
  };
  struct stat link_st {};
  if (::lstat(path.c_str(), &link_st) != 0) {
    if (errno == ENOENT && !explicit_path) return profile{};  // no corral.toml: the defaults
    return fail(std::string(std::strerror(errno)) +
                (explicit_path ? " (--config must name an existing file)" : ""));
  }
  // O_NONBLOCK: a FIFO planted as corral.toml must not hang start-up before fstat refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (S_ISLNK(link_st.st_mode) && err == ENOENT) {
      std::error_code ec;
      auto target = fs::read_symlink(path, ec);
      return fail("is a symlink to " + (ec ? std::string("a missing file") : target.string()) +
                  ", which does not exist");
    }
    return fail(std::strerror(err));
  }
  std::string text;
  struct stat st {};
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && static_cast<std::size_t>(st.st_size) <= kMaxConfigBytes) {
    char buf[16384];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > kMaxConfigBytes) break;
    }
  }
  ::close(fd);
  if (!regular) return fail("is not a regular file");
  if (text.size() > kMaxConfigBytes || static_cast<std::size_t>(st.st_size) > kMaxConfigBytes)
    return fail("is larger than 1 MiB; that is not a profile");
  std::error_code ec;
  auto canonical = fs::canonical(path, ec);
  if (ec) return fail(ec.message());
  return load_text(text, path, canonical.parent_path().string(), canonical.string(), project_dir);
}

expected<profile> load_profile_here(const std::string& config_path) {
  return load_profile(config_path, working_directory());
}

expected<profile> load_profile_here(const std::string& config_path, const boundary_grants& grants) {
  auto here = working_directory();
  auto prof = load_profile(config_path, here);
  if (!prof) return prof;
  if (auto s = apply_grants(*prof, grants, here); !s) return s.error();
  return prof;
}

} // namespace corral
