// The clients real workloads use, through an execution's egress proxy: `pip download` from a
// simple index and `git clone` over http, each from a file server on the host's 127.0.0.1
// reached by a test name. Both find the proxy only through the environment corral sets.
#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sys/wait.h>

#include "tests/egress_fixture.hpp"

using namespace corral;
using namespace corral::testing;

namespace {

// Runs a shell command on the host (bounded by timeout(1)); its exit status, output kept.
int host_command(const std::string& command, std::string* output = nullptr) {
  FILE* p = ::popen(("timeout 60 sh -c '" + command + "' 2>&1").c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// `python3 -m http.server` serving `dir` on 127.0.0.1; killed (and reaped) on destruction.
class file_server {
public:
  explicit file_server(const std::string& dir) {
    int probe = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    port_ = ntohs(bind_loopback(probe).sin_port);
    ::close(probe);  // the server binds it again at once; nothing else here takes ports
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      int null = ::open("/dev/null", O_WRONLY);  // its access log is not the test's output
      ::dup2(null, 1);
      ::dup2(null, 2);
      std::string port = std::to_string(port_);
      ::execl(kPython, kPython, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir.c_str(),
              port.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Ready when it accepts (10 s bound).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port_);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      if (up) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("the file server did not start on port " << port_);
  }
  ~file_server() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string port() const { return std::to_string(port_); }

private:
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

profile one_name_profile(const std::string& name, const std::string& port) {
  return egress_profile("allow = [\"" + name + ":" + port + "\", \"127.0.0.1/32:" + port + "\"]\n",
                        {{name, {"127.0.0.1"}}});
}

} // namespace

TEST_CASE("pip download fetches a wheel from a simple index through the proxy", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython) || host_command("python3 -m pip --version") != 0) {
    WARN("skipped: needs python3 with pip (Debian's python3-pip)");
    return;
  }
  // A PEP 503 index with one project, whose only file is a small pure-Python wheel.
  temp_dir index;
  std::string out;
  {
    std::ofstream make(index.path() + "/make_index.py");
    make << "import os, zipfile\n"
            "os.makedirs('simple/corral-demo')\n"
            "name = 'corral_demo-1.0-py3-none-any.whl'\n"
            "with zipfile.ZipFile('simple/corral-demo/' + name, 'w') as w:\n"
            "    w.writestr('corral_demo/__init__.py', 'VALUE = 42\\n')\n"
            "    w.writestr('corral_demo-1.0.dist-info/METADATA',\n"
            "               'Metadata-Version: 2.1\\nName: corral-demo\\nVersion: 1.0\\n')\n"
            "    w.writestr('corral_demo-1.0.dist-info/WHEEL',\n"
            "               'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n"
            "    w.writestr('corral_demo-1.0.dist-info/RECORD', '')\n"
            "with open('simple/corral-demo/index.html', 'w') as f:\n"
            "    f.write('<a href=\"%s\">%s</a>\\n' % (name, name))\n";
  }
  REQUIRE(host_command("cd " + index.path() + " && python3 make_index.py", &out) == 0);
  INFO(out);
  file_server server(index.path());
  test_runtime rt(one_name_profile("pkgs.test", server.port()), false);
  // Then the downloaded wheel is opened inside the jail: the bytes arrived whole.
  auto req = program({"/bin/sh", "-c",
                      "python3 -m pip download --no-cache-dir --disable-pip-version-check --progress-bar off"
                      " --no-deps --index-url http://pkgs.test:" + server.port() + "/simple --trusted-host pkgs.test"
                      " -d /work/dl corral-demo && python3 -c \"import zipfile; print(zipfile.ZipFile("
                      "'/work/dl/corral_demo-1.0-py3-none-any.whl').read('corral_demo/__init__.py').decode(), end='')\""});
  req.env["HOME"] = "/tmp";
  auto r = run_ok(rt, req);
  INFO(r.out.data << r.err.data);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out.data, Catch::Contains("Successfully downloaded corral-demo"));
  CHECK_THAT(r.out.data, Catch::EndsWith("\nVALUE = 42\n"));
  // Both fetches (the project page, the wheel) went through the proxy, to the name.
  REQUIRE(r.network);
  int allowed = 0;
  for (auto& e : r.network->events) allowed += e.host == "pkgs.test" && e.decision == "allowed";
  CHECK(allowed >= 1);
  std::uint64_t down = 0;
  for (auto& e : r.network->events) down += e.bytes_down;
  CHECK(down > 0);
}

TEST_CASE("git clone over http reaches a repository through the proxy", "[egress]") {
  if (auto why = landlock_unavailable(); !why.empty()) { WARN("skipped: " << why); return; }
  if (!have(kPython) || !have("/usr/bin/git")) { WARN("skipped: needs " << kPython << " and /usr/bin/git"); return; }
  // A bare repository with one commit, served the "dumb" http way (static files).
  temp_dir served;
  std::string out;
  REQUIRE(host_command("cd " + served.path() +
                           " && git init -q work && cd work && echo corral-clone-marker > README && git add README"
                           " && git -c user.name=t -c user.email=t@localhost commit -qm one"
                           " && cd .. && git clone -q --bare work repo.git && cd repo.git && git update-server-info",
                       &out) == 0);
  INFO(out);
  file_server server(served.path());
  test_runtime rt(one_name_profile("git.test", server.port()), false);
  auto req = program({"/bin/sh", "-c",
                      "git clone -q http://git.test:" + server.port() + "/repo.git /work/clone && cat /work/clone/README"});
  req.env["HOME"] = "/tmp";
  req.env["GIT_CONFIG_NOSYSTEM"] = "1";
  auto r = run_ok(rt, req);
  INFO(r.out.data << r.err.data);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "corral-clone-marker\n");
  REQUIRE(r.network);
  int allowed = 0;
  for (auto& e : r.network->events) allowed += e.host == "git.test" && e.decision == "allowed";
  CHECK(allowed >= 2);  // info/refs, then the objects
}
