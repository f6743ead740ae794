#include "config/replace_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "config/write_all.hpp"

namespace corral {

bool replace_file(const std::string& path, const std::string& temp, std::string_view bytes, bool sync) {
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool written = write_all(fd, bytes) && (!sync || ::fsync(fd) == 0);
  int err = errno;
  ::close(fd);
  if (written && ::rename(temp.c_str(), path.c_str()) == 0) return true;
  if (written) err = errno;
  ::unlink(temp.c_str());
  errno = err;
  return false;
}

} // namespace corral
