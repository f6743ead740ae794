#include "tiers/microvm/guest_channel.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace corral::microvm_guest {

namespace {

status load_module(const std::string& file) {
  auto path = std::string(kModuleDir) + "/" + file;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_failure(failure_kind::spawn_failed, "cannot open the module " + path + ": " + std::strerror(errno));
  long rc = ::syscall(SYS_finit_module, fd, "", 0);
  int err = errno;
  ::close(fd);
  if (rc != 0 && err != EEXIST)
    return make_failure(failure_kind::spawn_failed, "cannot load the module " + path + ": " + std::strerror(err));
  return ok();
}

// The /dev name of the port called kChannelPortName, once the host has announced it.
std::string find_port() {
  DIR* d = ::opendir("/sys/class/virtio-ports");
  if (!d) return {};
  std::string found;
  while (auto* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream name_file(std::string("/sys/class/virtio-ports/") + e->d_name + "/name");
    std::string name;
    std::getline(name_file, name);
    if (name == kChannelPortName) {
      found = std::string("/dev/") + e->d_name;
      break;
    }
  }
  ::closedir(d);
  return found;
}

} // namespace

expected<int> open_channel(std::chrono::milliseconds bound) {
  std::ifstream order(std::string(kModuleDir) + "/order");
  for (std::string file; std::getline(order, file);)
    if (!file.empty())
      if (auto loaded = load_module(file); !loaded) return loaded.error();
  // The port appears once the host's control message has been handled, and its device
  // node once devtmpfs has it: poll for both.
  auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    auto port = find_port();
    if (!port.empty()) {
      int fd = ::open(port.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
      if (fd >= 0) return fd;
      if (errno != ENOENT)
        return make_failure(failure_kind::spawn_failed, "cannot open the channel " + port + ": " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return make_failure(failure_kind::spawn_failed,
                          std::string("no virtio-serial port named '") + kChannelPortName + "' appeared within " +
                              std::to_string(bound.count()) + " ms (the VMM must add virtio-serial-device and a "
                              "virtserialport with that name; the image must carry the virtio modules)");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace corral::microvm_guest
