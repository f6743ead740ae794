// `corral serve` as a service manager runs it: readiness said only once the socket accepts
// (on stderr, and to systemd through NOTIFY_SOCKET), the socket systemd passes (socket
// activation), the socket's mode and group, and who is then admitted by peer credentials.
// Every check is from outside, as a client or an operator would see it.
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "proto/jsonrpc/jsonrpc.hpp"
#include "tests/daemon_process.hpp"

using namespace corral;
using namespace corral::testing;
using nlohmann::json;

namespace {

int unix_socket_at(const std::string& path, int type) {
  int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// A `corral serve` whose stderr this test reads line by line; what it is started with
// (environment, a passed socket) is set in the child by `prepare`.
struct watched_serve {
  temp_dir dir{"corral-service-"};
  pid_t pid = -1;
  int err = -1;  // the daemon's stderr
  std::string seen;

  watched_serve(std::vector<std::string> args, const std::function<void()>& prepare = [] {}) {
    int pipefd[2];
    REQUIRE(::pipe2(pipefd, O_CLOEXEC) == 0);
    std::vector<std::string> argv{CORRAL_TEST_CLI, "serve", "--state-dir", dir / "state"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::dup2(pipefd[1], 2);
      ::unsetenv("CORRAL_ALLOW_HOST");
      ::setenv("CORRAL_WORKSPACES_DIR", (dir / "workspaces").c_str(), 1);
      prepare();
      std::vector<char*> raw;
      for (auto& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    ::close(pipefd[1]);
    err = pipefd[0];
  }
  ~watched_serve() {
    stop();
    if (err >= 0) ::close(err);
  }
  // Reads stderr until a line holds `what` (true), or EOF / 20 s (false).
  bool wait_for(const std::string& what) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (seen.find(what) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      pollfd p{err, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      ssize_t n = ::read(err, buf, sizeof buf);
      if (n <= 0) return false;
      seen.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  // SIGTERM, then the exit status (SIGKILL after 15 s: a test must end).
  int stop() { return end(true); }
  // The exit status of a daemon that ends by itself (SIGKILL after 15 s).
  int exit_status() { return end(false); }
  int end(bool terminate) {
    if (pid <= 0) return -1;
    if (terminate) ::kill(pid, SIGTERM);
    int status = 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      ::usleep(10'000);
    }
    pid = -1;
    return status;
  }
};

// Exited with `code`, not ended by a signal (WEXITSTATUS alone reads 0 for a SIGTERM death).
bool exited_with(int status, int code) { return WIFEXITED(status) && WEXITSTATUS(status) == code; }

// A stopped daemon left none of its warm jails' cgroups, no lease record, no scratch dir.
void check_left_nothing(const watched_serve& d, const std::string& instance) {
  for (int n = 1; n <= 3; ++n) CHECK(cgroups_of(instance + "-w" + std::to_string(n)).empty());
  CHECK(entries(d.dir / "state/leases").empty());
  CHECK(entries(d.dir / "state/scratch").empty());
}

json health_over(const std::string& socket) {
  line_client c(socket);
  c.call(1, "health");
  return c.reply(1);
}

// A datagram on `fd` within 20 s, or "".
std::string next_datagram(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 20'000) <= 0) return "";
  char buf[4096];
  ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// Runs `body` as uid 65534 with `groups` as its supplementary groups and reports its exit
// status: the other user a socket's mode and group, and the allow list, are about.
int as_nobody(const std::vector<gid_t>& groups, const std::function<int()>& body) {
  pid_t child = ::fork();
  if (child == 0) {
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(90);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What the daemon says to a client that connects as `groups`/65534: 0 served, 1 refused by
// the allow list, 2 could not connect (the socket's mode or directory kept it out).
int nobody_reaches(const std::string& socket, const std::vector<gid_t>& groups) {
  return as_nobody(groups, [&] {
    int fd = connect_to(socket);
    if (fd < 0) return 2;
    // A refused peer is told at once and hung up on, so the send may fail: the reply is read
    // either way.
    std::string call = R"({"jsonrpc":"2.0","id":1,"method":"health"})" "\n";
    (void)::send(fd, call.data(), call.size(), MSG_NOSIGNAL);
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    if (n <= 0) return 4;
    buf[n] = '\0';
    auto reply = json::parse(std::string(buf, static_cast<std::size_t>(n)).substr(0, std::strcspn(buf, "\n")), nullptr, false);
    if (reply.contains("result")) return 0;
    return reply.contains("error") && reply["error"]["code"] == rpc::kRefused ? 1 : 5;
  });
}

gid_t unused_gid() {
  for (gid_t g = 47000;; ++g)
    if (!::getgrgid(g)) return g;
}

} // namespace

TEST_CASE("serve says listening only once the socket accepts - fifty starts in a row", "[daemon][service]") {
  temp_dir where{"corral-ready-"};
  for (int round = 0; round < 50; ++round) {
    std::string socket = where / ("d" + std::to_string(round) + ".sock");
    watched_serve d({"--socket", socket});
    INFO("round " << round << ": " << d.seen);
    REQUIRE(d.wait_for("listening on " + socket + "\n"));
    // Connected on the line itself: no retry, no sleep.
    int fd = connect_to(socket);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(health_over(socket)["result"]["status"] == "ok");
    CHECK(exited_with(d.stop(), 0));
  }
}

// A SIGTERM while the daemon starts (its runtime sweeping, arming the warm jail, binding)
// used to kill it by the default action: no lease finished, and the jail's cgroups and
// scratch mount stayed behind. Now it is held and the daemon stops cleanly once its loop
// runs. Each round signals as soon as the runtime has claimed its state dir; the rounds
// that land before the loop runs say so ("while starting"), and at least one must.
TEST_CASE("serve stops cleanly on a SIGTERM that comes while it starts", "[daemon][service]") {
  temp_dir where{"corral-early-term-"};
  int while_starting = 0;
  for (int round = 0; round < 10; ++round) {
    std::string socket = where / ("d" + std::to_string(round) + ".sock");
    watched_serve d({"--socket", socket, "-v"});
    auto owners = d.dir / "state/owners";
    // A claim is made as `<instance>.<pid>.pending`, linked to `<instance>`, and the pending
    // name unlinked: only the settled name counts.
    auto settled_claims = [&] {
      auto names = entries(owners);
      std::erase_if(names, [](const std::string& n) { return n.ends_with(".pending"); });
      return names;
    };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (settled_claims().empty() && std::chrono::steady_clock::now() < deadline) ::usleep(200);
    auto claims = settled_claims();
    REQUIRE(claims.size() == 1);
    std::string instance = claims.front();
    int status = d.stop();
    d.wait_for("\n\n");  // reads what is left: EOF ends it
    INFO("round " << round << ": " << d.seen);
    CHECK(exited_with(status, 0));
    if (d.seen.find("while starting") != std::string::npos) ++while_starting;
    check_left_nothing(d, instance);
  }
  CHECK(while_starting > 0);
}

TEST_CASE("serve tells systemd it is ready once it accepts, and when it stops", "[daemon][service]") {
  temp_dir notify_dir{"corral-notify-"};
  std::string notify_path = notify_dir / "notify";
  int notify = unix_socket_at(notify_path, SOCK_DGRAM);
  std::string socket = notify_dir / "d.sock";
  {
    watched_serve d({"--socket", socket}, [&] { ::setenv("NOTIFY_SOCKET", notify_path.c_str(), 1); });
    auto ready = next_datagram(notify);
    INFO(ready << " / " << d.seen);
    REQUIRE(ready.find("READY=1") != std::string::npos);
    CHECK(ready.find("MAINPID=" + std::to_string(d.pid)) != std::string::npos);
    CHECK(ready.find("STATUS=serving " + socket) != std::string::npos);
    // Ready means ready: the socket answers now.
    CHECK(health_over(socket)["result"]["status"] == "ok");
    // The daemon's executions do not see NOTIFY_SOCKET (it was taken out of the environment).
    line_client c(socket);
    c.call(2, "exec", {{"argv", {"/bin/sh", "-c", "echo \"[${NOTIFY_SOCKET:-unset}]\""}}});
    CHECK(c.reply(2)["result"]["stdout"] == "[unset]\n");
    c.close();
    ::kill(d.pid, SIGTERM);
    auto stopping = next_datagram(notify);
    CHECK(stopping.find("STOPPING=1") != std::string::npos);
    // A second SIGTERM while the runtime stops (a supervisor's impatience) is held too: the
    // leases still finish (the execution took the warm jail, so its replacement was arming).
    auto claims = entries(d.dir / "state/owners");
    REQUIRE(claims.size() == 1);
    CHECK(exited_with(d.stop(), 0));
    check_left_nothing(d, claims.front());
  }
  ::close(notify);
}

TEST_CASE("serve takes the socket systemd passes and leaves it in place", "[daemon][service]") {
  temp_dir where{"corral-activated-"};
  std::string socket = where / "corral.sock";
  int listener = unix_socket_at(socket, SOCK_STREAM);
  REQUIRE(::listen(listener, 16) == 0);
  auto pass_it = [&] {
    // As systemd does it: the socket as fd 3, and LISTEN_PID naming the exec'd process.
    // (dup2 onto itself would keep close-on-exec, so clear it for the listener already at 3)
    if (listener == 3) ::fcntl(3, F_SETFD, 0);
    else ::dup2(listener, 3);
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
  };
  SECTION("served, named in the readiness line, not removed at the stop") {
    watched_serve d({}, pass_it);
    bool listening = d.wait_for("listening on " + socket + "\n");
    INFO(d.seen);
    REQUIRE(listening);
    CHECK(health_over(socket)["result"]["status"] == "ok");
    // No child of the daemon inherits it, nor the variables.
    line_client c(socket);
    c.call(2, "exec", {{"argv", {"/bin/sh", "-c", "echo \"[${LISTEN_FDS:-unset}]\""}}});
    CHECK(c.reply(2)["result"]["stdout"] == "[unset]\n");
    c.close();
    CHECK(exited_with(d.stop(), 0));
    struct stat st {};
    CHECK(::stat(socket.c_str(), &st) == 0);  // systemd's to remove, not ours
  }
  SECTION("with --socket as well: refused, naming the unit's settings") {
    watched_serve d({"--socket", where / "other.sock"}, pass_it);
    CHECK(d.wait_for("SocketMode="));
    CHECK(exited_with(d.exit_status(), 125));
  }
  SECTION("two sockets: refused with what to change") {
    watched_serve d({}, [&] {
      pass_it();
      ::dup2(listener, 4);
      ::setenv("LISTEN_FDS", "2", 1);
    });
    CHECK(d.wait_for("takes exactly one"));
    CHECK(exited_with(d.exit_status(), 125));
  }
  SECTION("variables meant for another process are not taken") {
    std::string own = where / "own.sock";
    watched_serve d({"--socket", own}, [&] {
      pass_it();
      ::setenv("LISTEN_PID", "1", 1);
    });
    REQUIRE(d.wait_for("listening on " + own + "\n"));
    CHECK(health_over(own)["result"]["status"] == "ok");
  }
  ::close(listener);
}

TEST_CASE("socket mode and group decide who connects, the allow list who is served", "[daemon][service]") {
  if (::geteuid() != 0) {
    WARN("skipped: giving a socket to another group and connecting as another user need root");
    return;
  }
  gid_t group = unused_gid();  // a group no account on this machine is in
  temp_dir where{"corral-socket-mode-"};
  std::string socket = where / "sub/corral.sock";
  auto serve_on = [&](const std::string& path, std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--socket", path});
    auto d = std::make_unique<watched_serve>(extra);
    REQUIRE(d->wait_for("listening on " + path + "\n"));
    ::chmod(where.path().c_str(), 0711);  // the test's own dir, so uid 65534 can reach sub/
    return d;
  };
  SECTION("0660 to a group: its members connect and, once allowed, are served; others cannot connect") {
    auto g = std::to_string(group);
    auto d = serve_on(socket, {"--socket-mode", "0660", "--socket-group", g, "--allow-gid", g});
    struct stat st {};
    REQUIRE(::stat(socket.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);
    CHECK(st.st_gid == group);
    REQUIRE(::stat((where / "sub").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0711);  // searchable, not listable or writable
    // A member through a supplementary group (SO_PEERGROUPS), as a login user would be.
    CHECK(nobody_reaches(socket, {group}) == 0);
    // Not a member: the socket's mode keeps it out before any credential is checked.
    CHECK(nobody_reaches(socket, {}) == 2);
  }
  SECTION("a group that may connect but is not allowed: warned at the start, refused on connecting") {
    auto g = std::to_string(group);
    auto d = serve_on(socket, {"--socket-mode", "0660", "--socket-group", g});
    CHECK(d->seen.find("add --allow-gid " + g) != std::string::npos);
    CHECK(nobody_reaches(socket, {group}) == 1);
  }
  SECTION("0666 with --allow-uid: that user is served, every other user refused") {
    auto d = serve_on(socket, {"--socket-mode", "0666", "--allow-uid", "65534"});
    CHECK(nobody_reaches(socket, {}) == 0);
    auto other = serve_on(where / "sub/other.sock", {"--socket-mode", "0666"});
    CHECK(nobody_reaches(where / "sub/other.sock", {}) == 1);  // connected, then refused
  }
  SECTION("bad values are refused with the reason, and no socket is made") {
    std::vector<std::pair<std::vector<std::string>, std::string>> cases{
        {{"--socket-mode", "0777"}, "socket mode 0777 must keep 0600"},
        {{"--socket-mode", "0060"}, "socket mode 0060 must keep 0600"},
        {{"--socket-mode", "0640x"}, "octal permission bits such as 0660, not '0640x'"},
        {{"--socket-group", "no-such-group-corral"}, "no group 'no-such-group-corral'"}};
    for (auto& [bad, why] : cases) {
      std::vector<std::string> args{"--socket", socket};
      args.insert(args.end(), bad.begin(), bad.end());
      watched_serve d(args);
      INFO(bad[0] << " " << bad[1] << ": " << d.seen);
      CHECK(d.wait_for(why));
      CHECK(exited_with(d.exit_status(), 125));
      struct stat st {};
      CHECK(::stat(socket.c_str(), &st) != 0);
    }
  }
}
