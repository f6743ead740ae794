// A static program the escape suite copies into a container whose image has no python:
// it makes the attempts busybox has no tool for, and prints what the kernel answered.
//   escape-probe abstract NAME   connect to the abstract unix socket "\0NAME"
//   escape-probe ptrace PID      PTRACE_ATTACH to PID
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

namespace {

int connect_abstract(const char* name) {
  int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) {
    std::printf("refused socket %d\n", errno);
    return 0;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::size_t n = std::min(std::strlen(name), sizeof addr.sun_path - 1);
  std::memcpy(addr.sun_path + 1, name, n);
  auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  if (::connect(s, reinterpret_cast<sockaddr*>(&addr), len) == 0) std::printf("CONNECTED\n");
  else std::printf("refused %d\n", errno);
  ::close(s);
  return 0;
}

int attach(const char* pid) {
  long rc = ::ptrace(PTRACE_ATTACH, static_cast<pid_t>(std::atol(pid)), nullptr, nullptr);
  std::printf("ptrace %ld %d\n", rc, rc == 0 ? 0 : errno);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "abstract") == 0) return connect_abstract(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "ptrace") == 0) return attach(argv[2]);
  std::fprintf(stderr, "usage: escape-probe abstract NAME | ptrace PID\n");
  return 2;
}
