// The gvisor tier, asserted from outside: programs really run under gVisor's kernel (not
// the host's), see only the granted roots, write only the output roots and the scratch
// dir, and on every exit path (exit, timeout, the memory limit) leave no runsc process,
// no cgroup, no bundle and no runsc state behind. Skips, saying why, where runsc cannot
// start a sandbox here.
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "runtime_fixture.hpp"
#include "tiers/external/gvisor_tier.hpp"
#include "tiers/external/oci_bundle.hpp"

#include <nlohmann/json.hpp>

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

std::string gvisor_unavailable() {
  gvisor_tier t(profile{}, detect_kernel_features(), 5s);
  auto st = t.available();
  return st.available ? "" : st.reason;
}

#define REQUIRE_GVISOR()                                              \
  do {                                                                \
    static const std::string why = gvisor_unavailable();              \
    if (!why.empty()) {                                               \
      WARN("skipped: the gvisor tier is unavailable here: " << why);  \
      return;                                                         \
    }                                                                 \
  } while (0)

// Host processes whose command line mentions `needle` (the runtime's state dir: every
// runsc process of its executions names its bundle or state below it).
std::vector<std::string> processes_mentioning(const std::string& needle) {
  std::vector<std::string> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (auto* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    auto cmdline = read_text(std::string("/proc/") + e->d_name + "/cmdline");
    for (auto& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(needle) != std::string::npos) found.push_back(std::string(e->d_name) + ": " + cmdline);
  }
  ::closedir(proc);
  return found;
}

struct gvisor_fixture {
  temp_dir host{"corral-gvisor-"};
  std::string src, out, outside;
  std::unique_ptr<test_runtime> t;

  gvisor_fixture() {
    ::chmod(host.path().c_str(), 0755);
    src = host / "src";
    out = host / "out";
    outside = host / "outside";
    for (auto& d : {src, out, outside}) ::mkdir(d.c_str(), 0755);
    ::chmod(out.c_str(), 0777);
    ::chmod(outside.c_str(), 0777);
    std::ofstream(outside + "/secret") << "hunter2-secret\n";
    std::ofstream(src + "/granted.txt") << "granted\n";
    ::chmod((outside + "/secret").c_str(), 0644);
    ::chmod((src + "/granted.txt").c_str(), 0644);
    profile p;
    p.tier = "gvisor";
    p.limit.kill_grace = 200ms;
    p.source_roots.push_back({src, "/src", false});
    p.output_roots.push_back({out, "/out", true});
    t = std::make_unique<test_runtime>(p, false);
  }

  exec_result run(exec_request r) {
    if (!r.timeout) r.timeout = 30s;
    auto res = t->run(r);
    if (!res) FAIL("exec failed: " << res.error().describe());
    return *res;
  }
  exec_result sh(const std::string& code) { return run(shell(code)); }

  // Nothing of the execution is left: no runsc process, no bundle or runsc state, no
  // cgroup. (The scratch dir itself goes just after the reply.)
  void check_nothing_left(const exec_result& r) {
    CHECK(processes_mentioning(t->state.path()).empty());
    for (auto& e : entries(t->state.path() + "/state/scratch")) CHECK(e.find(".gvisor") == std::string::npos);
    CHECK(cgroups_of(r.execution_id).empty());
  }
};

} // namespace

TEST_CASE("an OCI bundle declares a read-only root, nobody and no capabilities", "[gvisor][oci]") {
  oci_bundle_spec b;
  b.process.args = {"/bin/echo", "hi"};
  b.process.env = {"A=1"};
  b.process.cwd = "/work";
  b.mounts.push_back({oci_mount::kind::ro_bind, "/usr", "/usr", 0});
  b.mounts.push_back({oci_mount::kind::rw_bind, "/srv/out", "/out", 0});
  b.mounts.push_back({oci_mount::kind::tmpfs, "", "/tmp", 1024});
  auto j = nlohmann::json::parse(oci_config_json(b, "/b/rootfs"));
  CHECK(j["root"]["path"] == "/b/rootfs");
  CHECK(j["root"]["readonly"] == true);
  CHECK(j["process"]["user"]["uid"] == 65534);
  CHECK(j["process"]["user"]["gid"] == 65534);
  CHECK(j["process"]["noNewPrivileges"] == true);
  CHECK(j["process"]["env"] == nlohmann::json::array({"A=1"}));
  for (const char* set : {"bounding", "effective", "inheritable", "permitted", "ambient"})
    CHECK(j["process"]["capabilities"][set].empty());
  bool net = false;
  for (auto& ns : j["linux"]["namespaces"]) net = net || ns["type"] == "network";
  CHECK(net);
  auto& m = j["mounts"];
  auto find = [&](const std::string& dest) {
    for (auto& e : m)
      if (e["destination"] == dest) return e;
    return nlohmann::json{};
  };
  CHECK(find("/usr")["options"].dump().find("\"ro\"") != std::string::npos);
  CHECK(find("/out")["options"].dump().find("\"rw\"") != std::string::npos);
  CHECK(find("/tmp")["options"].dump().find("size=1024") != std::string::npos);
}

TEST_CASE("the gvisor tier runs programs under gVisor's kernel, not the host's", "[gvisor]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  utsname host{};
  ::uname(&host);
  auto r = f.sh("echo hello; cat /src/granted.txt; id -u; pwd; uname -r");
  CHECK(r.how == verdict::exited);
  CHECK(r.exit_code == 0);
  CHECK(r.tier == "gvisor");
  CHECK(r.isolation.find("gvisor: runsc sandbox") != std::string::npos);
  CHECK(r.out.data.rfind("hello\ngranted\n65534\n/work\n", 0) == 0);
  // The sandbox's kernel answers uname: whatever gVisor claims, it is not this host's.
  CHECK(r.out.data.find(host.release) == std::string::npos);
  f.check_nothing_left(r);
  // The request's cwd is the sandbox process's.
  auto where = shell("pwd");
  where.cwd = "/src";
  CHECK(f.run(where).out.data == "/src\n");
}

TEST_CASE("the gvisor sandbox sees only the grants and writes only the output roots", "[gvisor][escape]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  auto marker = f.outside + "/marker";
  auto r = f.sh("cat " + f.outside + "/secret 2>/dev/null && echo READ || echo unreadable; "
                "cat /etc/shadow 2>/dev/null && echo READ || echo no-shadow; "
                "for p in " + marker + " /usr/marker /marker /src/marker /etc/marker; do "
                "if echo x > $p; then echo WROTE $p; else echo refused $p; fi; done 2>/dev/null; "
                "echo ok > /out/written; echo ok > /tmp/private; echo ok > /work/scratch-file");
  CHECK(r.out.data.find("unreadable") != std::string::npos);  // the attempt ran
  CHECK(r.out.data.find("hunter2") == std::string::npos);     // and failed
  CHECK(r.out.data.find("no-shadow") != std::string::npos);
  CHECK(r.out.data.find("refused " + marker) != std::string::npos);
  CHECK(r.out.data.find("refused /src/marker") != std::string::npos);
  CHECK(r.out.data.find("WROTE") == std::string::npos);
  CHECK_FALSE(exists(marker));
  CHECK_FALSE(exists("/usr/marker"));
  CHECK_FALSE(exists(f.src + "/marker"));
  CHECK(read_text(f.out + "/written") == "ok\n");
  CHECK_FALSE(exists("/tmp/private"));
  f.check_nothing_left(r);
}

TEST_CASE("the gvisor sandbox gets the request's environment, not the caller's", "[gvisor][escape]") {
  REQUIRE_GVISOR();
  ::setenv("CORRAL_GVISOR_SECRET", "hunter2-env", 1);
  gvisor_fixture f;
  auto req = shell("env");
  req.env["GIVEN"] = "yes";
  auto r = f.run(req);
  ::unsetenv("CORRAL_GVISOR_SECRET");
  CHECK(r.exit_code == 0);
  CHECK(r.out.data.find("GIVEN=yes") != std::string::npos);
  CHECK(r.out.data.find("hunter2-env") == std::string::npos);
}

TEST_CASE("a timed-out gvisor execution leaves no sandbox, cgroup or state behind", "[gvisor][timeout]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  auto req = shell("echo started; exec sleep 60");
  req.timeout = 1500ms;
  auto r = f.run(req);
  CHECK(r.how == verdict::timed_out);
  CHECK(r.out.data == "started\n");  // output before the deadline is kept
  f.check_nothing_left(r);
  CHECK(tracked_after_settling(*f.t->rt) == 0);
}

TEST_CASE("the memory limit holds for the whole gvisor sandbox and is reported", "[gvisor][limits]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  exec_request req;
  req.language = "python";
  req.code = "b = bytearray(1024 * 1024 * 1024)\nprint('ALLOCATED')\n";
  req.memory_limit_bytes = 256 * kMiB;
  auto r = f.run(req);
  CHECK(r.out.data.find("ALLOCATED") == std::string::npos);
  CHECK(r.how == verdict::out_of_memory);
  f.check_nothing_left(r);
}

TEST_CASE("a pids limit below what runsc itself needs is refused, not silently raised", "[gvisor][limits]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  auto req = shell("true");
  req.pids_limit = 16;
  auto r = f.t->run(req);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("at least 128") != std::string::npos);
  for (auto& e : entries(f.t->state.path() + "/state/scratch")) CHECK(e.find(".gvisor") == std::string::npos);
}

TEST_CASE("the pids limit bounds the processes a gvisor sandbox can start", "[gvisor][limits]") {
  REQUIRE_GVISOR();
  gvisor_fixture f;
  // Each sandboxed process with its own address space needs a host stub process (ptrace
  // platform), counted with runsc's threads against the lease's pids.max.
  auto req = shell("n=0; for i in $(seq 400); do sleep 20 & n=$((n+1)); done 2>/dev/null; "
                   "echo started $(jobs -p | wc -l)");
  req.pids_limit = 200;
  req.timeout = 15s;
  auto r = f.run(req);
  INFO(r.out.data << r.err.data.substr(0, 400) << " verdict " << to_string(r.how));
  CHECK(r.out.data.find("started 400") == std::string::npos);
  CHECK(r.how == verdict::pids_limit);
  f.check_nothing_left(r);
}
