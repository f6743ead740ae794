// Reading a /proc/PID file of a process that may exit meanwhile: read(2), because the read
// of a process that is gone fails with ESRCH, which libstdc++'s filebuf throws as an
// exception. Empty when the process (or the file) is gone.
#pragma once

#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace corral::testing {

inline std::string read_proc_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

} // namespace corral::testing
