// A runtime for tests: its own temporary state dir (removed afterwards), the helper from
// this build, the host tier allowed unless a test says otherwise.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <memory>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "actors/runtime.hpp"
#include "config/profile.hpp"

namespace corral::testing {

class temp_dir {
public:
  explicit temp_dir(const std::string& prefix = "corral-test-") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
    REQUIRE(!path_.empty());
  }
  ~temp_dir() {
    // A runtime that died before removing its scratch dirs leaves their tmpfs mounted
    // (tiers/jail/scratch_dir.hpp): unmount whatever is mounted below, then remove the tree.
    unmount_below(path_);
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
  static void unmount_below(const std::string& dir) {
    if (dir.empty()) return;
    std::ifstream info("/proc/self/mountinfo");
    std::vector<std::string> points;
    for (std::string line; std::getline(info, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, root, point;
      fields >> id >> parent >> dev >> root >> point;
      if (point.rfind(dir + "/", 0) == 0) points.push_back(point);
    }
    std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
    for (auto& p : points) ::umount2(p.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  }

  std::string path_;
};

struct test_runtime {
  temp_dir state{"corral-state-"};
  std::unique_ptr<runtime> rt;
  std::size_t warm = 0;

  // warm_jails: none by default, so a test knows whether its jail started cold or warm.
  // `adjust` changes the options last (the helper, the pool's demand window).
  explicit test_runtime(profile prof = host_profile(), bool allow_host = true, std::size_t warm_jails = 0,
                        const std::function<void(runtime_options&)>& adjust = {}) {
    runtime_options o;
    o.prof = std::move(prof);
    o.allow_host = allow_host;
    o.warm_jails = warm = warm_jails;
    o.exec_helper = CORRAL_TEST_HELPER;
    o.state_dir = state.path() + "/state";
    o.workspaces_dir = state.path() + "/workspaces";  // never the machine's own
    if (adjust) adjust(o);
    auto started = runtime::start(std::move(o));
    if (!started) FAIL("runtime::start: " << started.error().describe());
    rt = std::move(*started);
  }
  ~test_runtime() { rt.reset(); }  // before the state dir goes

  static profile host_profile() {
    profile p;
    p.tier = "host";
    p.limit.kill_grace = std::chrono::milliseconds(200);
    return p;
  }

  // With warm jails, each request waits until one is armed, so it surely takes one.
  expected<exec_result> run(exec_request r) {
    if (warm > 0 && !wait_armed()) FAIL("no warm jail was armed within 10 s");
    return rt->exec(r);
  }

  // Waits (bounded) until a warm jail is armed, so the next request takes it.
  bool wait_armed(std::chrono::milliseconds bound = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (rt->warm_jails_ready() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return rt->warm_jails_ready() > 0;
  }
};

// Processes the I/O loop still tracks once it has settled: the result can reach the
// caller a moment before the loop thread drops its entry for the reaped helper, so wait
// (bounded) rather than sample once.
inline std::size_t tracked_after_settling(const runtime& rt,
                                          std::chrono::milliseconds bound = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (rt.tracked_processes() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return rt.tracked_processes();
}

// Binds `fd` (an AF_INET stream socket) to a free port on 127.0.0.1: the bound address.
inline sockaddr_in bind_loopback(int fd) {
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  return addr;
}

inline exec_request shell(const std::string& code) {
  exec_request r;
  r.language = "command";
  r.code = code;
  return r;
}

inline exec_request program(std::vector<std::string> argv) {
  exec_request r;
  r.language = "argv";
  r.argv = std::move(argv);
  return r;
}

// Output of a shell command run by the test itself (engine queries, outside views), or
// empty.
inline std::string shell_output(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

// lstat: a dangling symlink exists too.
inline bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The names in a directory, without "." and ".."; none when it cannot be read.
inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (auto* e = ::readdir(d))
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
  ::closedir(d);
  return out;
}

// Any cgroup dir left for this execution (or lease id) in any hierarchy.
inline std::vector<std::string> cgroups_of(const std::string& exec_id) {
  std::vector<std::string> found;
  for (auto& h : entries("/sys/fs/cgroup")) {
    auto dir = "/sys/fs/cgroup/" + h + "/corral/" + exec_id;
    if (exists(dir)) found.push_back(dir);
  }
  return found;
}

// Polls `f` until it holds or `bound` has passed, then asks once more: every wait bounded.
template <class F>
bool eventually(F f, std::chrono::milliseconds bound = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

// Pids whose argv holds `marker` as one whole argument, seen from the host's /proc.
inline std::vector<pid_t> with_arg(const std::string& marker) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (auto* e = ::readdir(d)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(f, arg, '\0'))
      if (arg == marker) out.push_back(pid);
  }
  ::closedir(d);
  return out;
}

} // namespace corral::testing
