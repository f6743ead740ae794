#include "actors/mcp/mcp_audit_log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/write_all.hpp"

namespace corral {

namespace {

int open_for_append(const std::string& path) {
  // O_NONBLOCK: a FIFO put at the path must not hang the session's start (it is then
  // refused as not a regular file).
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
}

} // namespace

mcp_audit_log::~mcp_audit_log() {
  if (fd_ >= 0) ::close(fd_);
}

mcp_audit_log::mcp_audit_log(mcp_audit_log&& other) noexcept { *this = std::move(other); }

mcp_audit_log& mcp_audit_log::operator=(mcp_audit_log&& other) noexcept {
  if (this == &other) return *this;
  if (fd_ >= 0) ::close(fd_);
  fd_ = other.fd_;
  other.fd_ = -1;
  path_ = std::move(other.path_);
  max_ = other.max_;
  size_ = other.size_;
  error_ = std::move(other.error_);
  return *this;
}

expected<mcp_audit_log> mcp_audit_log::open(const std::string& path, std::uint64_t max_bytes) {
  mcp_audit_log log;
  log.fd_ = open_for_append(path);
  if (log.fd_ < 0)
    return make_failure(failure_kind::config_error, "the MCP audit file " + path + " cannot be opened for appending: " +
                                                        std::strerror(errno) + " (mcp.audit / --audit)");
  struct stat st {};
  if (::fstat(log.fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return make_failure(failure_kind::config_error, "the MCP audit file " + path + " is not a regular file");
  log.path_ = path;
  log.max_ = max_bytes;
  log.size_ = static_cast<std::uint64_t>(st.st_size);
  return log;
}

bool mcp_audit_log::reopen() {
  int fd = open_for_append(path_);
  if (fd < 0) {
    error_ = "reopen " + path_ + ": " + std::strerror(errno);
    return false;
  }
  ::close(fd_);
  fd_ = fd;
  struct stat st {};
  size_ = ::fstat(fd_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return true;
}

bool mcp_audit_log::rotate() {
  auto old = path_ + ".1";
  if (::rename(path_.c_str(), old.c_str()) != 0) {
    error_ = "rename " + path_ + " to " + old + ": " + std::strerror(errno);
    return false;
  }
  return reopen();
}

// Another writer of the same path (two sessions of one profile) may have rotated it: then
// this one follows it to the new file instead of writing on into FILE.1. A reopen that
// failed before is tried again here.
bool mcp_audit_log::follow_rotation() {
  struct stat at_path {}, held {};
  if (::stat(path_.c_str(), &at_path) == 0 && ::fstat(fd_, &held) == 0 && at_path.st_ino == held.st_ino &&
      at_path.st_dev == held.st_dev)
    return true;
  return reopen();
}

bool mcp_audit_log::append(const std::string& line) {
  if (fd_ < 0) return false;
  if (!follow_rotation()) return false;
  std::string bytes = line + "\n";
  if (size_ > 0 && size_ + bytes.size() > max_ && !rotate()) return false;
  if (!write_all(fd_, bytes)) {
    error_ = "write " + path_ + ": " + std::strerror(errno);
    return false;
  }
  size_ += bytes.size();
  return true;
}

} // namespace corral
