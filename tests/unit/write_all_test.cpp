// config/write_all: the one whole-buffer write every floor uses.
#include <catch2/catch.hpp>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <string>
#include <thread>
#include <unistd.h>

#include "config/write_all.hpp"

using namespace corral;

namespace {

struct pipe_pair {
  int fd[2] = {-1, -1};
  pipe_pair() { REQUIRE(::pipe2(fd, O_CLOEXEC) == 0); }
  ~pipe_pair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
};

} // namespace

TEST_CASE("write_all writes every byte across short writes", "[unit][write_all]") {
  pipe_pair p;
  // More than a pipe's default 64 KiB holds: write_all needs several write(2) calls, and a
  // reader thread drains concurrently so the writer is never blocked for good.
  std::string data(200'000, 'x');
  for (std::size_t i = 0; i < data.size(); i += 997) data[i] = static_cast<char>('a' + i % 26);
  std::string got;
  std::thread reader([&] {
    char buf[8192];
    for (;;) {
      ssize_t n = ::read(p.fd[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
  });
  bool ok = write_all(p.fd[1], data);
  ::close(p.fd[1]);
  p.fd[1] = -1;
  reader.join();
  CHECK(ok);
  CHECK(got == data);
}

TEST_CASE("write_all reports a refused descriptor with its errno", "[unit][write_all]") {
  pipe_pair p;
  ::close(p.fd[0]);
  p.fd[0] = -1;
  auto old = ::signal(SIGPIPE, SIG_IGN);
  errno = 0;
  bool ok = write_all(p.fd[1], "nobody reads this");
  int err = errno;
  ::signal(SIGPIPE, old);
  CHECK_FALSE(ok);
  CHECK(err == EPIPE);
  CHECK(write_all(p.fd[1], ""));  // nothing to write is not a failure
}
