// read_passphrase_file (node_tls.hpp): plain file checks, apart from node_tls.cpp so that
// the lean `corral`, which parses --node-key-passphrase-file before handing --nodes to
// corral-full, links no TLS.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/nodes/node_tls.hpp"

namespace corral {

namespace {

// OpenSSL hands a passphrase callback 1024 bytes, and CAF's own callback copies at most
// 1023 of them: a longer passphrase would pass the check here and fail in CAF.
constexpr std::size_t kMaxPassphrase = 1023;

} // namespace

expected<std::string> read_passphrase_file(const std::string& path) {
  auto refuse = [&](const std::string& why) {
    return make_failure(failure_kind::config_error, "the passphrase file " + path + " " + why);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return refuse(std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  std::string text;
  std::optional<failure> bad;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    bad = refuse("is not a regular file");
  } else if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    bad = refuse(std::string("can be read or written by other users (mode ") + mode + "): chmod 600 it");
  } else {
    char buf[4097];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() <= kMaxPassphrase + 2)
      text.append(buf, static_cast<std::size_t>(n));
    if (n < 0) bad = refuse(std::string("cannot be read: ") + std::strerror(errno));
  }
  ::close(fd);
  if (bad) return *bad;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.size() > kMaxPassphrase) return refuse("is longer than " + std::to_string(kMaxPassphrase) + " bytes");
  if (text.empty()) return refuse("is empty");
  if (text.find('\0') != std::string::npos || text.find('\n') != std::string::npos)
    return refuse("holds a NUL byte or more than one line");
  return text;
}

} // namespace corral
