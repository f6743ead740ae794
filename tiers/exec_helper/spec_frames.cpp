#include "tiers/exec_helper/spec_frames.hpp"

#include <cerrno>
#include <cstdint>
#include <unistd.h>

#include "tiers/jail/jail_spec.hpp"

namespace corral::helper {

namespace {

// Reads exactly n bytes; false on EOF or error before that (errno says which for errors).
bool read_exactly(int fd, char* p, std::size_t n, std::size_t& got) {
  got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

} // namespace

frame_read read_frame(int fd, std::string& out) {
  std::uint32_t length = 0;
  std::size_t got = 0;
  errno = 0;
  if (!read_exactly(fd, reinterpret_cast<char*>(&length), sizeof length, got))
    return got == 0 && errno == 0 ? frame_read::eof : frame_read::broken;
  if (length > kMaxFrameBytes) return frame_read::broken;
  out.assign(length, '\0');
  if (!read_exactly(fd, out.data(), length, got)) return frame_read::broken;
  return frame_read::ok;
}

} // namespace corral::helper
