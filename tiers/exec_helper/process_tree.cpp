#include "tiers/exec_helper/process_tree.hpp"

#include <csignal>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace corral::helper {

namespace {

void children_of(pid_t pid, std::vector<pid_t>& out) {
  std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return;  // gone already
  while (auto* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string path = task_dir + "/" + entry->d_name + "/children";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    pid_t value = 0;
    bool in_number = false;
    for (char c : text) {
      if (c >= '0' && c <= '9') {
        value = value * 10 + (c - '0');
        in_number = true;
      } else if (in_number) {
        out.push_back(value);
        value = 0;
        in_number = false;
      }
    }
    if (in_number) out.push_back(value);
  }
  ::closedir(dir);
}

} // namespace

std::vector<pid_t> descendants_of(pid_t root) {
  std::vector<pid_t> found;
  children_of(root, found);
  for (std::size_t i = 0; i < found.size(); ++i) children_of(found[i], found);
  return found;
}

void signal_tree(pid_t self, pid_t target_pgid, int sig) {
  if (target_pgid > 1) ::kill(-target_pgid, sig);
  for (pid_t pid : descendants_of(self))
    if (pid > 1 && pid != self) ::kill(pid, sig);
}

} // namespace corral::helper
