// The contained tier where it is for: corral run inside a container that podman starts
// with runc, Docker's default seccomp profile, every capability dropped, no-new-privileges,
// a non-root user (a restricted pod's runAsNonRoot), the cgroup filesystem read-only, and
// corral's binaries and the system's /usr bound read-only. The container shares the host's
// network, so each escape attempt has a control: the same attempt made in the container
// without corral succeeds, and made through corral fails.
#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "container_fixture.hpp"
#include "runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// Tagged by what it holds: an image of an older layout is never reused.
constexpr const char* kSkeleton = "localhost/corral-test-skeleton:tmp-1777";

// Docker's default seccomp profile, as written: the Debian package's (podman's) profile
// less what Docker's refuses without CAP_SYS_ADMIN: unshare, clone with a namespace flag,
// and clone3 (ENOSYS, so libc falls back to clone, whose flags are checked).
std::string docker_default_seccomp(const std::string& dir) {
  std::ifstream in("/usr/share/containers/seccomp.json");
  if (!in) return "";
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return "";
  for (auto& rule : j["syscalls"]) {
    auto& names = rule["names"];
    nlohmann::json kept = nlohmann::json::array();
    for (auto& n : names)
      if (n != "unshare" && n != "clone" && n != "clone3") kept.push_back(n);
    names = kept;
  }
  constexpr std::uint64_t kNamespaceFlags = 0x7E020000;  // CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
  j["syscalls"].push_back({{"names", {"clone"}},
                           {"action", "SCMP_ACT_ALLOW"},
                           {"args", {{{"index", 0}, {"value", kNamespaceFlags}, {"valueTwo", 0}, {"op", "SCMP_CMP_MASKED_EQ"}}}}});
  j["syscalls"].push_back({{"names", {"clone3"}}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 38}});
  std::string path = dir + "/docker-default-seccomp.json";
  std::ofstream(path) << j.dump();
  return path;
}

// An image of the bare directory skeleton (/usr, corral and the test's files are bound in).
std::string ensure_skeleton(const std::string& dir) {
  if (std::system(("podman image exists " + std::string(kSkeleton)).c_str()) == 0) return "";
  std::string root = dir + "/skeleton";
  std::filesystem::create_directories(root);
  for (auto* link : {"bin", "lib", "lib64", "sbin"})
    std::filesystem::create_symlink(std::string("usr/") + link, root + "/" + link);
  for (auto* d : {"usr", "etc", "tmp", "proc", "dev", "sys", "run", "corral", "t"}) std::filesystem::create_directory(root + "/" + d);
  // runc gives a tmpfs mounted on an existing dir that dir's mode, whatever --tmpfs says:
  // /tmp must be 1777 here, or the container user cannot write its /tmp (the umask made it 0755).
  std::filesystem::permissions(root + "/tmp", std::filesystem::perms::all | std::filesystem::perms::sticky_bit);
  std::ofstream(root + "/etc/ld.so.cache").flush();
  std::string cmd = "tar -C " + root + " -cf - . | podman import -q - " + kSkeleton + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 ? "" : "podman import of the skeleton image failed";
}

std::string container_unavailable(const std::string& dir) {
  if (find_on_path("podman").empty()) return "podman is not installed";
  if (find_on_path("runc").empty()) return "runc is not installed";
  if (!exists("/usr/share/containers/seccomp.json")) return "no /usr/share/containers/seccomp.json (golang-github-containers-common)";
  return ensure_skeleton(dir);
}

} // namespace

TEST_CASE("inside a restricted container only the contained tier is given, and it holds", "[contained][container][escape]") {
  temp_dir d{"corral-in-container-"};
  ::chmod(d.path().c_str(), 0755);
  if (auto why = container_unavailable(d.path()); !why.empty()) {
    WARN("skipped: " << why);
    return;
  }
  auto seccomp = docker_default_seccomp(d.path());
  REQUIRE_FALSE(seccomp.empty());
  // The files the program reaches for, world-readable or world-writable so that only the
  // boundary, not the container user's permissions, can refuse.
  std::string t = d / "t";
  for (auto* sub : {"", "/src", "/out", "/outside"}) {
    ::mkdir((t + sub).c_str(), 0777);
    ::chmod((t + sub).c_str(), 0777);
  }
  std::ofstream(t + "/outside/secret") << "hunter2-secret\n";
  std::ofstream(t + "/src/granted.txt") << "granted\n";
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = testing::bind_loopback(listener);
  REQUIRE(::listen(listener, 8) == 0);
  std::string port = std::to_string(ntohs(addr.sin_port));

  // Each line the script prints is "NAME: what happened"; C (the control) runs without corral.
  std::string connect_py = "import socket\n"
                           "try:\n    s = socket.socket()\n    s.settimeout(2)\n    s.connect((\"127.0.0.1\", " + port + "))\n    print(\"CONNECTED\")\n"
                           "except OSError as e:\n    print(\"refused\", e.errno)\n";
  std::string script =
      "C=/corral/corral\n"
      "B=\"$C run --tier contained --ro /t/src --rw /t/out\"\n"
      "R=\"$B --\"\n"
      "echo \"doctor-json: $($C doctor --json | tr -d '\\n')\"\n"
      "echo \"ready: $($C doctor --ready --tier contained)\"\n"
      "echo \"landlock-ready: $($C doctor --ready --tier landlock | cut -c1-9)\"\n"
      "echo \"C-secret: $(cat /t/outside/secret)\"\n"
      "echo \"secret: $($R sh -c 'cat /t/outside/secret 2>&1 || echo denied')\"\n"
      "echo \"granted: $($R cat /t/src/granted.txt)\"\n"
      "echo \"write: $($R sh -c 'echo x > /t/outside/marker 2>/dev/null && echo WROTE || echo refused')\"\n"
      "echo \"out: $($R sh -c 'echo ok > /t/out/written && echo written')\"\n"
      "echo \"links: $($R sh -c 'ln -s /t/outside/secret /t/out/link; cat /t/out/link 2>/dev/null || echo nolink; "
      "ln /t/outside/secret /t/out/hard 2>/dev/null && echo LINKED || echo nohard')\" | tr '\\n' ' '; echo\n"
      "echo \"C-tcp: $(python3 -c '" + connect_py + "')\"\n"
      "echo \"tcp: $($R python3 -c '" + connect_py + "')\"\n"
      "echo \"bomb: $($B --pids 16 -- python3 -c 'import os, time\nn = 0\ntry:\n    for i in range(10000):\n"
      "        if os.fork() == 0:\n            time.sleep(2)\n            os._exit(0)\n        n += 1\n"
      "except OSError as e:\n    print(\"stopped\", e.errno)\n')\"\n"
      "exec 7</t/outside/secret\n"
      "echo \"fds: $($R python3 -c 'import os; print(sorted(int(x) for x in os.listdir(\"/proc/self/fd\")))')\"\n"
      "exec 7<&-\n"
      "$R sh -c 'setsid sh -c \"sleep 1; echo late > /t/out/late\" </dev/null >/dev/null 2>&1 & echo launched' >/dev/null\n"
      "sleep 2; echo \"late: $(cat /t/out/late 2>/dev/null || echo none)\"\n"
      "echo \"tiocsti: $($R python3 -c 'import fcntl, termios\ntry:\n    fcntl.ioctl(0, termios.TIOCSTI, b\"x\")\n"
      "    print(\"INJECTED\")\nexcept OSError as e:\n    print(\"refused\", e.errno)\n')\"\n"
      "echo \"json: $($B --json -- true | tr -d '\\n')\"\n";
  std::ofstream(t + "/script.sh") << script;

  std::string cmd = "timeout 120 podman --cgroup-manager=cgroupfs run --rm --runtime runc --read-only"
                    " --tmpfs /tmp:rw,mode=1777 --security-opt seccomp=" + seccomp +
                    " --cap-drop=all --security-opt no-new-privileges --user 1000:1000 --network host"
                    " --ulimit nofile=4096:4096 --ulimit nproc=4096:4096"
                    " -v /usr:/usr:ro -v /etc/ld.so.cache:/etc/ld.so.cache:ro"
                    " -v " + std::filesystem::path(CORRAL_TEST_CLI).parent_path().string() + ":/corral:ro"
                    " -v " + t + ":/t " + kSkeleton + " sh /t/script.sh 2>&1";
  auto out = shell_output(cmd);
  pollfd p{listener, POLLIN, 0};
  int accepted = 0;
  while (::poll(&p, 1, 100) == 1) {
    int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) break;
    ++accepted;
    ::close(c);
  }
  ::close(listener);
  INFO(out);
  auto line = [&](const std::string& name) {
    auto at = out.find("\n" + name + ": ");
    if (at == std::string::npos && out.rfind(name + ": ", 0) == 0) at = 0;
    else if (at != std::string::npos) ++at;
    if (at == std::string::npos) return std::string("<missing>");
    auto start = at + name.size() + 2;
    return out.substr(start, out.find('\n', start) - start);
  };

  // doctor: the landlock tier is unavailable, for the reasons this container has, and the
  // contained tier available; the advice names what would unlock the stronger one.
  auto doctor = nlohmann::json::parse(line("doctor-json"), nullptr, false);
  REQUIRE_FALSE(doctor.is_discarded());
  CHECK(doctor["kernel"]["user_namespaces"] == false);
  for (auto& tier : doctor["tiers"]) {
    if (tier["name"] == "landlock") CHECK(tier["available"] == false);
    if (tier["name"] == "contained") CHECK(tier["available"] == true);
  }
  CHECK(doctor["strongest_available"] == "contained");
  CHECK(doctor["environment"]["container"] == "podman");
  CHECK(doctor["environment"]["landlock_tier_needs"].dump().find("CLONE_NEWUSER") != std::string::npos);
  CHECK(doctor["environment"]["landlock_tier_needs"].dump().find("/proc is masked") != std::string::npos);
  CHECK(doctor["environment"]["landlock_tier_needs"].dump().find("no writable cgroup") != std::string::npos);
  CHECK(line("ready") == "ready: contained");
  CHECK(line("landlock-ready") == "not ready");

  // Each escape: the control shows the container alone allows it; corral refuses it.
  CHECK(line("C-secret") == "hunter2-secret");
  CHECK(line("secret").find("hunter2") == std::string::npos);
  CHECK(line("secret").find("denied") != std::string::npos);
  CHECK(line("granted") == "granted");
  CHECK(line("write") == "refused");
  CHECK_FALSE(exists(t + "/outside/marker"));
  CHECK(line("out") == "written");
  CHECK(line("links").find("nolink nohard") != std::string::npos);
  CHECK(line("links").find("hunter2") == std::string::npos);
  CHECK_FALSE(exists(t + "/out/hard"));
  CHECK(line("C-tcp") == "CONNECTED");
  CHECK(line("tcp").find("refused") != std::string::npos);
  CHECK(accepted == 1);  // the control's connection only
  CHECK(line("bomb") == "stopped 11");
  CHECK(line("fds") == "[0, 1, 2, 3]");
  CHECK(line("late") == "none");
  CHECK(line("tiocsti") == "refused 1");
  // What cannot hold without namespaces is reported, not silently passed.
  auto result = nlohmann::json::parse(line("json"), nullptr, false);
  REQUIRE_FALSE(result.is_discarded());
  CHECK(result["not_enforced"].dump().find("process_visibility") != std::string::npos);
  CHECK(result["not_enforced"].dump().find("pids_limit") != std::string::npos);
}
