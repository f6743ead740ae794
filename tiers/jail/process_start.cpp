#include "tiers/jail/process_start.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace corral {

std::optional<std::uint64_t> process_start_time(pid_t pid) {
  // No allocation and no streams: the entering helper calls this too.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  ssize_t n;
  do n = ::read(fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // The command name (field 2) is in parentheses and may hold spaces and ')': the fields
  // after it start past the last ')'.
  char* p = std::strrchr(buf, ')');
  if (!p) return std::nullopt;
  ++p;
  // Fields 3..21 precede the start time: skip 19 of them.
  for (int field = 3; field <= 21; ++field) {
    while (*p == ' ') ++p;
    while (*p && *p != ' ') ++p;
    if (!*p) return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long ticks = std::strtoull(p, &end, 10);
  if (errno || end == p) return std::nullopt;
  return static_cast<std::uint64_t>(ticks);
}

} // namespace corral
