// The operator's grants (--ro, --rw, --here, --env, --net, --cwd), the masks over protected
// paths inside roots, the inside-path checks against the jail's view, and the jail's
// default environment. Jailed cases assert from outside: what the program printed, and
// what the host's files hold afterwards.
#include <cstdio>
#include <cstdlib>
#include <pwd.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/boundary_grants.hpp"
#include "config/root_layout.hpp"
#include "config/toml_profile.hpp"
#include "landlock_fixture.hpp"
#include "proto/describe/descriptor.hpp"
#include "runtime_fixture.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/jail/idmapped_mount.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

// A project as a tool works on it: a git repository with a config, a file of its own, and
// a secret beside it that no grant covers. World-readable, so only the boundary keeps the
// secret from the jail (which runs as another uid).
struct project_fixture {
  temp_dir base{"corral-grants-"};
  std::string dir = base / "project";
  std::string secret = base / "secret.txt";
  project_fixture() {
    ::chmod(base.path().c_str(), 0755);
    // World-writable, so only the mask (a read-only mount) can refuse a write into .git.
    write_file(dir + "/.git/config", "[core]\n\tbare = false\n", 0666);
    ::chmod((dir + "/.git").c_str(), 0777);
    write_file(dir + "/main.txt", "project file\n");
    write_file(secret, "hunter2\n");
  }
};

profile granted(const boundary_grants& g, const std::string& cwd) {
  profile p;
  p.limit.kill_grace = 200ms;
  auto s = apply_grants(p, g, cwd);
  if (!s) FAIL("apply_grants: " << s.error().describe());
  return p;
}

exec_result run_sh(test_runtime& t, const std::string& code) {
  auto r = shell(code);
  r.timeout = 20s;
  auto res = t.run(r);
  if (!res) FAIL("exec failed: " << res.error().describe());
  return *res;
}

} // namespace

TEST_CASE("grants add roots, variables, the network and a working dir to the profile", "[grants][config]") {
  project_fixture f;
  boundary_grants g;
  g.read_only = {f.dir + "/main.txt", f.dir + ":/project"};
  g.env = {{"GIVEN", "yes"}};
  g.network = network_mode::host;
  g.working_dir = "/project";
  auto p = granted(g, f.base.path());
  REQUIRE(p.source_roots.size() == 2);
  // A file as well as a directory; without INSIDE, at the host path itself.
  CHECK(p.source_roots[0].virtual_path == fs::canonical(f.dir).string() + "/main.txt");
  CHECK(p.source_roots[1].virtual_path == "/project");
  CHECK(p.env.at("GIVEN") == "yes");
  CHECK(p.network == network_mode::host);
  CHECK(p.working_dir == "/project");
  // The repository's .git inside the root is masked read-only, not refused.
  REQUIRE(p.masks.size() == 1);
  CHECK(p.masks[0].virtual_path == "/project/.git");
  CHECK(p.masks[0].kind == mask_kind::read_only);

  SECTION("--here: the caller's directory, writable, at the same path, where programs start") {
    boundary_grants here;
    here.here = here_mode::writable;
    auto q = granted(here, f.dir);
    REQUIRE(q.output_roots.size() == 1);
    CHECK(q.output_roots[0].virtual_path == f.dir);
    CHECK(q.working_dir == f.dir);
    REQUIRE(q.masks.size() == 1);
    CHECK(q.masks[0].virtual_path == f.dir + "/.git");
  }
  SECTION("each bad grant names itself and why") {
    profile q;
    boundary_grants bad;
    bad.read_only = {f.base / "missing"};
    auto s = apply_grants(q, bad, f.base.path());
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("--ro") && Catch::Contains("missing") && Catch::Contains("No such file"));
    bad.read_only = {f.dir + ":/work"};
    s = apply_grants(q, bad, f.base.path());
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("scratch dir"));
    boundary_grants cwd;
    cwd.working_dir = "/nowhere";
    s = apply_grants(q, cwd, f.base.path());
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("/nowhere") && Catch::Contains("not in the view"));
  }
}

TEST_CASE("a root's inside path is checked against the view when the profile is loaded", "[grants][config]") {
  project_fixture f;
  fs::create_directories(f.dir + "/inner");
  fs::create_directories(f.base / "other");
  auto layout = [&](std::vector<root_grant> roots) {
    profile p;
    for (auto& r : roots) (r.writable ? p.output_roots : p.source_roots).push_back(r);
    return check_root_layout(p);
  };
  auto refused = [](const std::string& host, const std::string& inside, bool writable = false) {
    auto g = resolve_root(host, inside, writable);
    REQUIRE_FALSE(g);
    return g.error().message;
  };
  // Refused, each with its reason.
  CHECK_THAT(refused(f.dir, "/work"), Catch::Contains("scratch dir") && Catch::Contains("/work/src"));
  CHECK_THAT(refused(f.dir, "/tmp"), Catch::Contains("private /tmp"));
  CHECK_THAT(refused(f.dir, "/etc"), Catch::Contains("system directories"));
  CHECK_THAT(refused(f.dir, "/usr/lib/x"), Catch::Contains("/usr"));
  CHECK_THAT(refused(f.dir, "/proc/x"), Catch::Contains("/proc"));
  CHECK_THAT(refused("/etc", "/hostetc", true), Catch::Contains("never granted writable"));
  CHECK_THAT(refused("/usr/share", "/share", true), Catch::Contains("never granted writable"));
  CHECK(resolve_root("/etc", "/hostetc", false));  // read-only is fine
  // Supported: below /work and /tmp, and nested where the outer root holds the mount point.
  CHECK(resolve_root(f.dir, "/work/src", false));
  CHECK(resolve_root(f.dir, "/tmp/src", false));
  CHECK(layout({{f.dir, "/x", false}, {f.base / "other", "/x/inner", true}}));
  auto s = layout({{f.dir, "/x", false}, {f.base / "other", "/x/absent/y", false}});
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("/x/absent/y") && Catch::Contains("does not exist") &&
                                    Catch::Contains("never creates"));
  s = layout({{f.dir, "/x", false}, {f.base / "other", "/x", false}});
  REQUIRE_FALSE(s);
  CHECK_THAT(s.error().message, Catch::Contains("both at /x"));
}

TEST_CASE("describe shows grants, masks and the default environment, never the operator's values", "[grants][describe]") {
  project_fixture f;
  boundary_grants g;
  g.writable = {f.dir + ":/project"};
  g.env = {{"API_TOKEN", "s3cret-value"}};
  auto p = granted(g, f.base.path());
  auto features = detect_kernel_features();
  auto tiers = build_default_tiers(p, features);
  auto d = profile_descriptor(p, features, *tiers);
  auto text = d.dump();
  CHECK(text.find("s3cret-value") == std::string::npos);
  CHECK(d["environment"]["set"] == nlohmann::json::array({"API_TOKEN"}));
  CHECK(d["environment"]["defaults"]["HOME"] == "/tmp");
  CHECK(d["environment"]["defaults"]["LANG"] == "C.UTF-8");
  REQUIRE(d["masks"].size() == 1);
  CHECK(d["masks"][0]["virtual"] == "/project/.git");
  CHECK(d["masks"][0]["how"] == "read-only");
  auto without = profile_descriptor(granted({}, f.base.path()), features, *tiers);
  CHECK(without["digest"] != d["digest"]);
}

TEST_CASE("a granted file is read and an ungranted one is not", "[grants][landlock]") {
  REQUIRE_LANDLOCK();
  project_fixture f;
  boundary_grants g;
  g.read_only = {f.dir + "/main.txt:/granted.txt"};
  test_runtime t(granted(g, f.base.path()), false);
  auto r = run_sh(t, "cat /granted.txt; echo tried; cat " + f.secret + " " + f.dir + "/.git/config");
  CHECK(r.out.data == "project file\ntried\n");
  CHECK(r.exit_code != 0);
  CHECK(r.out.data.find("hunter2") == std::string::npos);
}

TEST_CASE("through --here, .git stays read-only and the config file hidden, and the result says so",
          "[grants][landlock][escape]") {
  REQUIRE_LANDLOCK();
  project_fixture f;
  write_file(f.dir + "/corral.toml", "[sandbox]\n# the operator's profile\n");
  auto prof = load_profile(f.dir + "/corral.toml", f.dir);
  REQUIRE(prof);
  boundary_grants g;
  g.here = here_mode::writable;
  REQUIRE(apply_grants(*prof, g, f.dir));
  prof->limit.kill_grace = 200ms;
  ::chmod(f.dir.c_str(), 0777);  // the jail's uid must be able to write the project itself
  test_runtime t(*prof, false);
  auto before = read_text(f.dir + "/.git/config");
  auto r = run_sh(t,
                  "pwd; echo x >> .git/config && echo appended; echo tried-append;"
                  "rm -rf .git && echo removed; mv .git moved && echo renamed; echo tried-remove;"
                  "echo hook > .git/hooks-new && echo hooked; cat corral.toml && echo read-config; echo tried-read;"
                  "echo kept > made.txt && echo wrote");
  INFO(r.out.data << r.err.data);
  CHECK(r.out.data == f.dir + "\ntried-append\ntried-remove\ntried-read\nwrote\n");
  CHECK(read_text(f.dir + "/.git/config") == before);
  CHECK_FALSE(exists(f.dir + "/.git/hooks-new"));
  CHECK(exists(f.dir + "/.git"));
  CHECK(read_text(f.dir + "/made.txt") == "kept\n");
  CHECK(read_text(f.dir + "/corral.toml") == "[sandbox]\n# the operator's profile\n");
  REQUIRE(r.masked.size() == 2);
  CHECK_THAT(r.masked[0] + r.masked[1], Catch::Contains(f.dir + "/.git (read-only") &&
                                            Catch::Contains(f.dir + "/corral.toml (hidden"));
}

TEST_CASE("colliding inside paths are supported or refused at load, never at run time", "[grants][landlock]") {
  REQUIRE_LANDLOCK();
  project_fixture f;
  write_file(f.base / "other/inner.txt", "inner root\n");
  write_file(f.base / "work-src/w.txt", "under work\n");
  write_file(f.base / "tmp-src/t.txt", "under tmp\n");
  fs::create_directories(f.dir + "/nested");
  boundary_grants g;
  g.read_only = {f.dir + ":/x", f.base / "other" + ":/x/nested", f.base / "work-src" + ":/work/src",
                 f.base / "tmp-src" + ":/tmp/src"};
  g.working_dir = "/x/nested";
  test_runtime t(granted(g, f.base.path()), false);
  auto r = run_sh(t, "cat /x/main.txt inner.txt /work/src/w.txt /tmp/src/t.txt; pwd");
  INFO(r.err.data);
  CHECK(r.exit_code == 0);
  CHECK(r.out.data == "project file\ninner root\nunder work\nunder tmp\n/x/nested\n");
}

TEST_CASE("the jail has a PATH, a writable HOME, TMPDIR and LANG, overridable by the profile",
          "[grants][landlock][env]") {
  REQUIRE_LANDLOCK();
  profile p;
  p.limit.kill_grace = 200ms;
  SECTION("the defaults serve an npx-style lookup") {
    test_runtime t(p, false);
    // node where this machine has it; sh everywhere.
    std::string tool = exists("/usr/bin/node") ? "node" : "sh";
    auto r = run_sh(t, "command -v " + tool + "; echo $HOME; mkdir -p $HOME/x/.npm && echo made; echo $TMPDIR $LANG");
    INFO(r.err.data);
    CHECK(r.out.data == "/usr/bin/" + tool + "\n/tmp\nmade\n/tmp C.UTF-8\n");
  }
  SECTION("the profile's and the request's values win") {
    p.env["HOME"] = "/work";
    test_runtime t(p, false);
    auto req = shell("echo $HOME $LANG");
    req.env["LANG"] = "C";
    auto r = t.run(req);
    REQUIRE(r);
    CHECK(r->out.data == "/work C\n");
  }
}

namespace {

struct shell_outcome {
  int status = -1;
  std::string out;
};

// `command` through sh, bounded by timeout(1); stdout only (stderr is redirected by the caller).
shell_outcome run_shell(const std::string& command) {
  shell_outcome o;
  FILE* p = ::popen(("timeout 60 " + command).c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  int st = ::pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

} // namespace

TEST_CASE("corral run --here from a project: .git cannot be changed, and the result lists the masks",
          "[grants][cli][landlock][escape]") {
  REQUIRE_LANDLOCK();
  project_fixture f;
  ::chmod(f.dir.c_str(), 0777);  // without idmapped mounts the jail's uid must be able to write
  auto before = read_text(f.dir + "/.git/config");
  auto r = run_shell("sh -c 'cd " + f.dir + " && " CORRAL_TEST_CLI " run --json --here -- sh -c \"echo x >> .git/config; "
                     "echo tried; echo ok > made.txt\"' 2>/dev/null");
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  INFO(r.out);
  CHECK(j["stdout"] == "tried\n");
  CHECK_THAT(j["stderr"].get<std::string>(), Catch::Contains("Read-only file system"));
  CHECK(j["masked"] == nlohmann::json::array({f.dir + "/.git (read-only: a .git directory)"}));
  CHECK(read_text(f.dir + "/.git/config") == before);
  CHECK(read_text(f.dir + "/made.txt") == "ok\n");
}

TEST_CASE("the grant flags are shared, checked, and refused where a daemon's profile applies", "[grants][cli]") {
  project_fixture f;
  SECTION("--env KEY copies this shell's value, and a missing one is named") {
    auto r = run_shell("env -u CORRAL_NO_SUCH_VAR " CORRAL_TEST_CLI " run --tier host --allow-host --env "
                       "CORRAL_NO_SUCH_VAR -- /bin/true 2>&1");
    CHECK(r.status == 125);
    CHECK_THAT(r.out, Catch::Contains("--env CORRAL_NO_SUCH_VAR") && Catch::Contains("no variable"));
    r = run_shell("env CORRAL_GIVEN=from-shell " CORRAL_TEST_CLI " run --tier host --allow-host --env CORRAL_GIVEN -- "
                  "/bin/sh -c 'echo $CORRAL_GIVEN'");
    CHECK(r.status == 0);
    CHECK(r.out == "from-shell\n");
  }
  SECTION("with --connect, flags that shape the boundary are refused by every command") {
    for (std::string cmd : {"run", "mcp", "shell"}) {
      auto r = run_shell(std::string(CORRAL_TEST_CLI) + " " + cmd + " --connect /nonexistent.sock --ro " + f.dir +
                         " -- /bin/true 2>&1 </dev/null");
      CHECK(r.status == 125);
      CHECK_THAT(r.out, Catch::Contains("no effect with --connect"));
    }
  }
  SECTION("describe takes the same flags and shows the grant and its mask") {
    auto r = run_shell("sh -c 'cd " + f.dir + " && " CORRAL_TEST_CLI " describe --here --env LANG=C'");
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    CHECK(j["working_dir"] == f.dir);
    CHECK(j["masks"][0]["virtual"] == f.dir + "/.git");
    CHECK(j["environment"]["set"] == nlohmann::json::array({"LANG"}));
  }
  SECTION("a bad grant is refused before anything runs, with its reason") {
    auto r = run_shell(std::string(CORRAL_TEST_CLI) + " run --rw /etc:/hostetc -- /bin/true 2>&1");
    CHECK(r.status == 125);
    CHECK_THAT(r.out, Catch::Contains("never granted writable"));
  }
}

namespace {

// A system user for one test, removed (with its group) however the test ends.
struct test_user {
  std::string name = "corral-idmap-" + std::to_string(::getpid());
  uid_t uid = 0;
  gid_t gid = 0;
  bool created = false;
  test_user() {
    created = std::system(("useradd -M -U -s /usr/sbin/nologin " + name + " >/dev/null 2>&1").c_str()) == 0;
    if (auto* pw = created ? ::getpwnam(name.c_str()) : nullptr) uid = pw->pw_uid, gid = pw->pw_gid;
  }
  ~test_user() {
    if (created) (void)!std::system(("userdel " + name + " >/dev/null 2>&1").c_str());
  }
};

} // namespace

TEST_CASE("idmapped mount support is detected, per filesystem", "[grants][idmap]") {
  temp_dir dir;
  auto problem = idmapped_mount_problem(dir.path());
  if (::geteuid() != 0) {
    CHECK_THAT(problem, Catch::Contains("unprivileged runtime"));
    return;
  }
  // procfs never supports idmapping: detection must say so rather than claim support.
  CHECK_THAT(idmapped_mount_problem("/proc/self"), Catch::Contains("mount_setattr MOUNT_ATTR_IDMAP"));
  CHECK_THAT(idmapped_mount_problem(dir / "missing"), Catch::Contains("No such file"));
  if (!problem.empty()) WARN("idmapped mounts are unavailable on " << dir.path() << ": " << problem);
}

TEST_CASE("a file written into a root owned by a non-root user belongs to that user", "[grants][landlock][idmap]") {
  REQUIRE_LANDLOCK();
  if (::geteuid() != 0) {
    WARN("skipped: idmapped mounts need a root runtime (this test also creates a user)");
    return;
  }
  temp_dir base{"corral-idmap-"};
  ::chmod(base.path().c_str(), 0755);
  std::string out = base / "out";
  ::mkdir(out.c_str(), 0755);  // only its owner may write: no chmod for the jail
  if (auto problem = idmapped_mount_problem(out); !problem.empty()) {
    WARN("skipped: idmapped mounts are unavailable for " << out << ": " << problem);
    return;
  }
  test_user user;
  REQUIRE(user.created);
  REQUIRE(::chown(out.c_str(), user.uid, user.gid) == 0);
  profile p;
  p.limit.kill_grace = 200ms;
  p.output_roots.push_back({out, "/out", true});
  test_runtime t(p, false);
  auto r = run_sh(t, "id -u; echo written > /out/made && echo wrote; mkdir /out/sub && echo made-dir");
  INFO(r.err.data);
  CHECK(r.out.data == "65534\nwrote\nmade-dir\n");  // still the unprivileged id inside
  struct stat st {};
  REQUIRE(::stat((out + "/made").c_str(), &st) == 0);
  CHECK(st.st_uid == user.uid);
  CHECK(st.st_gid == user.gid);
  REQUIRE(::stat((out + "/sub").c_str(), &st) == 0);
  CHECK(st.st_uid == user.uid);
  CHECK(read_text(out + "/made") == "written\n");
  CHECK_THAT(r.isolation, Catch::Contains("idmapped to their owners"));
}

namespace {

// initialize → tools/list → list_directory → write_file with the official SDK's client,
// against the filesystem server run by `corral mcp` (the command after the project path).
const char* const kFilesystemClient = R"(import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const [project, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "corral-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const listing = await client.callTool({ name: "list_directory", arguments: { path: project } });
const written = await client.callTool({ name: "write_file", arguments: { path: project + "/from-mcp.txt", content: "written through corral\n" } });
console.log(JSON.stringify({ tools: tools.tools.map((t) => t.name), listing, written }));
await client.close();
)";

} // namespace

TEST_CASE("the MCP filesystem server runs on its own project with --here, and what it writes is the project owner's",
          "[grants][mcp][landlock][idmap]") {
  REQUIRE_LANDLOCK();
  temp_dir tools("corral-mcpfs-");
  ::chmod(tools.path().c_str(), 0755);  // the jail reads it as nobody
  // Bounded: a machine without the registry skips instead of hanging.
  std::string install = "cd " + tools.path() +
                        " && timeout 240 npm install --no-audit --no-fund --loglevel=error "
                        "@modelcontextprotocol/server-filesystem @modelcontextprotocol/sdk > npm.log 2>&1";
  if (std::system(install.c_str()) != 0) {
    WARN("skipped: npm could not install the MCP packages (no registry?): " << read_text(tools / "npm.log").substr(0, 500));
    return;
  }
  std::ofstream(tools / "client.mjs") << kFilesystemClient;
  temp_dir base("corral-mcpfs-project-");
  ::chmod(base.path().c_str(), 0755);
  std::string project = base / "project";
  write_file(project + "/README.md", "the project\n");
  write_file(project + "/.git/HEAD", "ref: refs/heads/main\n");
  bool idmapped = ::geteuid() == 0 && idmapped_mount_problem(project).empty();
  std::optional<test_user> user;
  if (idmapped) {
    user.emplace();
    REQUIRE(user->created);
    REQUIRE(std::system(("chown -R " + user->name + ": " + project).c_str()) == 0);
  } else {
    WARN("idmapped mounts are unavailable: checking the listing and the write only, not the owner");
    ::chmod(project.c_str(), 0777);
  }
  std::string cmd = "cd " + project + " && timeout 120 node " + tools / "client.mjs " + project + " " +
                    CORRAL_TEST_CLI + " mcp --here --ro " + tools.path() + ":/tools -- node " +
                    "/tools/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js " + project + " > " +
                    tools / "out.json 2> " + tools / "err.log";
  int rc = std::system(cmd.c_str());
  INFO("stderr: " << read_text(tools / "err.log"));
  CHECK(rc == 0);
  auto out = read_text(tools / "out.json");
  INFO("client output: " << out);
  CHECK(out.find("\"list_directory\"") != std::string::npos);
  CHECK(out.find("[FILE] README.md") != std::string::npos);
  CHECK(out.find("Successfully wrote") != std::string::npos);
  CHECK(read_text(project + "/from-mcp.txt") == "written through corral\n");
  if (idmapped) {
    struct stat st {};
    REQUIRE(::stat((project + "/from-mcp.txt").c_str(), &st) == 0);
    CHECK(st.st_uid == user->uid);
  }
}
