// corral.toml: one snippet per rejection, the values good files produce, protected paths
// through symlinks, tighten-never-widen and the frozen profile.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "config/protected_paths.hpp"
#include "config/tighten.hpp"
#include "config/toml/toml_profile.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;
using corral::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

expected<profile> parse(const std::string& text, const std::string& project_dir) {
  return load_profile_from_string(text, "test.toml", project_dir);
}

// The message of a rejected snippet; fails the test if the snippet was accepted.
std::string rejection(const std::string& text) {
  temp_dir project;
  auto p = parse(text, project.path());
  REQUIRE_FALSE(p);
  CHECK(p.error().kind == failure_kind::config_error);
  return p.error().message;
}

} // namespace

TEST_CASE("unknown keys are errors naming the dotted key and its position", "[config]") {
  SECTION("top level") {
    auto m = rejection("sandbox = {}\nsandboxx = 1\n");
    CHECK_THAT(m, Catch::Contains("'sandboxx'") && Catch::Contains("test.toml:2:1"));
  }
  SECTION("in [sandbox]") {
    auto m = rejection("[sandbox]\ntier = \"landlock\"\ntierr = \"host\"\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.tierr'") && Catch::Contains("test.toml:3:1"));
  }
  SECTION("in [sandbox.limits]") {
    auto m = rejection("[sandbox.limits]\nmemory = \"1g\"\n\nmemroy = \"1g\"\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.limits.memroy'") && Catch::Contains("test.toml:4:1"));
  }
  SECTION("in a tier table") {
    auto m = rejection("[sandbox.landlock]\nabi = 3\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.landlock.abi'") && Catch::Contains("test.toml:2:1"));
    m = rejection("[sandbox.gvisor]\nrunsc = \"runsc\"\nnetwork = \"host\"\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.gvisor.network'") && Catch::Contains("test.toml:3:1"));
    m = rejection("[sandbox.e2b]\napi_key = \"x\"\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.e2b.api_key'") && Catch::Contains("test.toml:2:1"));
  }
  SECTION("deeper, and written as dotted keys") {
    auto m = rejection("[sandbox.roots.extra]\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.roots.extra'") && Catch::Contains("test.toml:1:"));
    m = rejection("[sandbox]\nlimits.cpu = 1\nlimits.cpus = 2\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.limits.cpus'") && Catch::Contains("test.toml:3:"));
    m = rejection("[sandbox.languages.python]\nrun = [\"python3\"]\nrunn = []\n");
    CHECK_THAT(m, Catch::Contains("'sandbox.languages.python.runn'") && Catch::Contains("test.toml:3:1"));
  }
}

TEST_CASE("wrong types are errors with the value's position", "[config]") {
  CHECK_THAT(rejection("sandbox = 1\n"), Catch::Contains("sandbox: expected a table, found an integer"));
  CHECK_THAT(rejection("[sandbox]\ntier = 3\n"),
             Catch::Contains("test.toml:2:8") && Catch::Contains("sandbox.tier: expected a string"));
  CHECK_THAT(rejection("[sandbox]\nnetwork = true\n"), Catch::Contains("sandbox.network: expected a string, found a boolean"));
  CHECK_THAT(rejection("[sandbox.limits]\npids = \"10\"\n"), Catch::Contains("sandbox.limits.pids: expected an integer"));
  CHECK_THAT(rejection("[sandbox.limits]\ncpu = \"2\"\n"), Catch::Contains("sandbox.limits.cpu: expected a number"));
  CHECK_THAT(rejection("[sandbox.limits]\nmemory = 1.5\n"), Catch::Contains("sandbox.limits.memory: expected a size"));
  CHECK_THAT(rejection("[sandbox.roots]\nsource_roots = \"/tmp:/src\"\n"),
             Catch::Contains("sandbox.roots.source_roots: expected an array of strings"));
  CHECK_THAT(rejection("[sandbox.roots]\nsource_roots = [1]\n"), Catch::Contains("expected strings, found an integer"));
  CHECK_THAT(rejection("[sandbox.env]\nA = 1\n"), Catch::Contains("sandbox.env.A: expected a string"));
  CHECK_THAT(rejection("[sandbox]\nlimits = []\n"), Catch::Contains("sandbox.limits: expected a table, found an array"));
  CHECK_THAT(rejection("[sandbox.languages]\npython = \"python3\"\n"),
             Catch::Contains("sandbox.languages.python: expected a table"));
}

TEST_CASE("bad values are errors with their position", "[config]") {
  SECTION("enumerations") {
    CHECK_THAT(rejection("[sandbox]\ntier = \"tier9\"\n"), Catch::Contains("unknown tier 'tier9'"));
    CHECK_THAT(rejection("[sandbox]\nnetwork = \"bridge\"\n"), Catch::Contains("'bridge' is not one of \"none\", \"host\""));
    CHECK_THAT(rejection("[sandbox]\non_widen = \"ignore\"\n"), Catch::Contains("sandbox.on_widen"));
    CHECK_THAT(rejection("[sandbox.landlock]\ndeny_action = \"log\"\n"), Catch::Contains("sandbox.landlock.deny_action"));
    CHECK_THAT(rejection("[sandbox.landlock]\nabi_floor = 0\n"), Catch::Contains("sandbox.landlock.abi_floor"));
    CHECK_THAT(rejection("[sandbox.container]\nengine = \"lxc\"\n"), Catch::Contains("sandbox.container.engine"));
  }
  SECTION("memory") {
    for (const char* bad : {"\"0\"", "\"-1\"", "\"12q\"", "\"512mm\"", "0", "-1", "\"\""}) {
      INFO(bad);
      CHECK_THAT(rejection(std::string("[sandbox.limits]\nmemory = ") + bad + "\n"),
                 Catch::Contains("test.toml:2:10") && Catch::Contains("sandbox.limits.memory"));
    }
    CHECK_THAT(rejection("[sandbox.limits]\noutput_cap = \"1x\"\n"), Catch::Contains("sandbox.limits.output_cap"));
    CHECK_THAT(rejection("[sandbox.limits]\nstdin_cap = 0\n"), Catch::Contains("sandbox.limits.stdin_cap"));
  }
  SECTION("cpu") {
    for (const char* bad : {"nan", "inf", "-inf", "0", "-1", "0.0", "-0.5", "100000"}) {
      INFO(bad);
      CHECK_THAT(rejection(std::string("[sandbox.limits]\ncpu = ") + bad + "\n"),
                 Catch::Contains("test.toml:2:7") && Catch::Contains("sandbox.limits.cpu"));
    }
  }
  SECTION("timeout, kill_grace and pids") {
    for (const char* bad : {"0", "inf", "nan", "-1", "0.0001", "1e12"}) {
      INFO(bad);
      CHECK_THAT(rejection(std::string("[sandbox.limits]\ntimeout = ") + bad + "\n"),
                 Catch::Contains("test.toml:2:11") && Catch::Contains("sandbox.limits.timeout"));
    }
    CHECK_THAT(rejection("[sandbox.limits]\nkill_grace = -1\n"), Catch::Contains("sandbox.limits.kill_grace"));
    CHECK_THAT(rejection("[sandbox.limits]\nkill_grace = nan\n"), Catch::Contains("sandbox.limits.kill_grace"));
    CHECK_THAT(rejection("[sandbox.limits]\npids = 0\n"), Catch::Contains("test.toml:2:8") && Catch::Contains("sandbox.limits.pids"));
    CHECK_THAT(rejection("[sandbox.limits]\npids = -3\n"), Catch::Contains("sandbox.limits.pids"));
  }
  SECTION("environment") {
    CHECK_THAT(rejection("[sandbox.env]\n\"A=B\" = \"x\"\n"), Catch::Contains("must not contain '='"));
    CHECK_THAT(rejection("[sandbox.env]\n\"\" = \"x\"\n"), Catch::Contains("must not be empty"));
    CHECK_THAT(rejection("[sandbox.env]\nA = \"x\\u0000y\"\n"), Catch::Contains("NUL"));
    CHECK_THAT(rejection("[sandbox.env]\n\"A\\u0000\" = \"x\"\n"), Catch::Contains("NUL"));
  }
  SECTION("languages") {
    CHECK_THAT(rejection("[sandbox.languages.zig]\nsource_file = \"main.zig\"\n"), Catch::Contains("needs `run`"));
    CHECK_THAT(rejection("[sandbox.languages.zig]\nrun = []\n"), Catch::Contains("needs a run command"));
    CHECK_THAT(rejection("[sandbox.languages.zig]\nsource_file = \"../x.zig\"\nrun = [\"zig\"]\n"),
               Catch::Contains("plain file name"));
    CHECK_THAT(rejection("[sandbox.languages.argv]\nrun = [\"x\"]\n"), Catch::Contains("cannot be redefined"));
    CHECK_THAT(rejection("[sandbox.languages.zig]\nrun = [\"\", \"{src}\"]\n"), Catch::Contains("must not be empty"));
  }
}

TEST_CASE("bytes a config file may not hold", "[config]") {
  SECTION("a NUL byte") {
    auto m = rejection(std::string("[sandbox]\ntier = \"host\"\x00\n", 24));
    CHECK_THAT(m, Catch::Contains("NUL") && Catch::Contains("test.toml:2:"));
  }
  SECTION("invalid UTF-8 in a string") {
    auto m = rejection("[sandbox]\ntier = \"ho\xff\xfest\"\n");
    CHECK_THAT(m, Catch::Contains("UTF-8") && Catch::Contains("test.toml:2:"));
  }
  SECTION("invalid UTF-8 in a comment, read from a file") {
    temp_dir dir;
    write_file(dir / "corral.toml", "# caf\xc3\x28\n[sandbox]\n");
    auto p = load_profile("", dir.path());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("UTF-8") && Catch::Contains("corral.toml:1:"));
  }
  SECTION("characters toml++ 3.3 mishandles reach it as stand-ins and come back unchanged") {
    // Each of these made toml++ 3.3.0 reach __builtin_unreachable (found by the fuzzer).
    CHECK_THAT(rejection("[sandbox]\nti\xd1\x90rnetm = \"x\"\n"), Catch::Contains("test.toml:2:3") && Catch::Contains("saw '\xd1\x90'"));
    CHECK_THAT(rejection("[sandbox.gvisor]\nrunsc = 2/usr'''''::\xc6\xbd::\n"), Catch::Contains("test.toml:2:"));
    CHECK_THAT(rejection("[sandbox]\ntimeout = 1W[\"out:\xd1\x90ut\"]\n"), Catch::Contains("test.toml:2:"));
    CHECK_THAT(rejection("[sandbox]\n\"\xd1\x90\" = 1\n"), Catch::Contains("unknown key 'sandbox.\"\xd1\x90\"'"));
    CHECK_THAT(rejection("# \xee\x80\x80\n"), Catch::Contains("test.toml:1:3") && Catch::Contains("private-use"));
    temp_dir project;
    auto p = parse("[sandbox.env]\nA = \"\"\"\\\n  \xc2\xa7\xef\xb9\x90\xe3\x80\x80\"\"\"\n\"\xd0\x80X\" = '\xe2\xb4\x80'\n",
                   project.path());
    REQUIRE(p);
    CHECK(p->env["A"] == "\xc2\xa7\xef\xb9\x90\xe3\x80\x80");
    CHECK(p->env["\xd0\x80X"] == "\xe2\xb4\x80");
  }
  SECTION("non-ASCII inside strings and comments is fine") {
    temp_dir project;
    const std::string text = R"(# répertoire — ok
[sandbox.env]
A = "café \"§"
B = '§'
C = """§
§"""""
D = '''§''''
)";
    auto p = parse("\xef\xbb\xbf" + text, project.path());
    REQUIRE(p);
    CHECK(p->env["A"] == "café \"§");
    CHECK(p->env["B"] == "§");
    CHECK(p->env["C"] == "§\n§\"\"");
    CHECK(p->env["D"] == "§'");
  }
  SECTION("a TOML syntax error") {
    CHECK_THAT(rejection("[sandbox]\ntier = \n"), Catch::Contains("test.toml:2:"));
  }
}

TEST_CASE("which file is read", "[config]") {
  temp_dir dir;
  SECTION("no corral.toml in the project: the defaults") {
    auto p = load_profile("", dir.path());
    REQUIRE(p);
    CHECK(p->tier == "landlock");
    CHECK(p->config_path.empty());
    CHECK(p->source_roots.empty());
  }
  SECTION("an explicit --config that is missing is an error") {
    auto p = load_profile(dir / "nope.toml", dir.path());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("nope.toml"));
  }
  SECTION("a dangling symlink is an error, explicit or as the default file") {
    REQUIRE(::symlink((dir / "gone.toml").c_str(), (dir / "corral.toml").c_str()) == 0);
    for (const std::string& path : {std::string(), dir / "corral.toml"}) {
      auto p = load_profile(path, dir.path());
      REQUIRE_FALSE(p);
      CHECK_THAT(p.error().message, Catch::Contains("symlink") && Catch::Contains("gone.toml"));
    }
  }
  SECTION("a directory is not a config file") {
    fs::create_directory(dir / "corral.toml");
    auto p = load_profile("", dir.path());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("not a regular file"));
  }
  SECTION("a symlink to a real file is followed and the canonical path recorded") {
    write_file(dir / "real.toml", "[sandbox]\ntier = \"tier2\"\n");
    REQUIRE(::symlink((dir / "real.toml").c_str(), (dir / "corral.toml").c_str()) == 0);
    auto p = load_profile("", dir.path());
    REQUIRE(p);
    CHECK(p->tier == "gvisor");
    CHECK(p->config_path == fs::canonical(dir / "real.toml").string());
  }
  SECTION("an error from a file names the file and the position") {
    write_file(dir / "corral.toml", "[sandbox]\n\n  tierr = 1\n");
    auto p = load_profile("", dir.path());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains(dir / "corral.toml:3:3") && Catch::Contains("sandbox.tierr"));
  }
}

TEST_CASE("a good config parses to the values it says", "[config]") {
  temp_dir project;
  fs::create_directories(project / "src");
  fs::create_directories(project / "out");
  auto p = parse(R"(
[sandbox]
tier = "tier1"
network = "host"
on_widen = "clamp"
protected_paths = ["secrets", "/etc/shadow"]
env = { LANG = "C.UTF-8", "MY_VAR" = "" }

[sandbox.roots]
source_roots = ["src:/src", "src:/src2:ro"]
output_roots = ["out:/out:rw"]

[sandbox.limits]
memory = "512m"
output_cap = 4096
stdin_cap = "2g"
cpu = 1.5
pids = 64
timeout = 2.5
kill_grace = 0

[sandbox.landlock]
abi_floor = 3
deny_action = "kill"

[sandbox.gvisor]
runsc = "bin/runsc"
platform = "ptrace"

[sandbox.container]
engine = "docker"
image = "debian:12"
runtime = "runc"

[sandbox.microvm]
kernel = "/boot/vmlinux"
rootfs = "images/rootfs.ext4"
vmm = "cloud-hypervisor"

[sandbox.e2b]

[sandbox.languages.typescript]
run = ["tsx", "{src}"]

[sandbox.languages.python]
run = ["python3", "-I", "{src}"]

[sandbox.languages.zig]
source_file = "main.zig"
compile = ["zig", "build-exe", "{src}"]
run = ["{bin}"]
env_allowlist = ["PATH", "ZIG_GLOBAL_CACHE_DIR"]

[sandbox.languages.rust]
run = []
)",
                 project.path());
  REQUIRE(p);
  auto root = fs::canonical(project.path()).string();
  CHECK(p->tier == "container");
  CHECK(p->network == network_mode::host);
  CHECK(p->on_widen == widen_policy::clamp);
  CHECK(p->protected_paths == std::vector<std::string>{project / "secrets", "/etc/shadow"});
  CHECK(p->env == std::map<std::string, std::string>{{"LANG", "C.UTF-8"}, {"MY_VAR", ""}});
  REQUIRE(p->source_roots.size() == 2);
  CHECK(p->source_roots[0].host_path == root + "/src");
  CHECK(p->source_roots[0].virtual_path == "/src");
  CHECK_FALSE(p->source_roots[0].writable);
  CHECK_FALSE(p->source_roots[1].writable);
  REQUIRE(p->output_roots.size() == 1);
  CHECK(p->output_roots[0].host_path == root + "/out");
  CHECK(p->output_roots[0].writable);
  CHECK(p->limit.memory_bytes == std::optional<std::uint64_t>(536870912));
  CHECK(p->limit.output_cap == 4096);
  CHECK(p->limit.stdin_cap == 2ull * 1024 * 1024 * 1024);
  CHECK(p->limit.cpu_cores == std::optional<double>(1.5));
  CHECK(p->limit.pids == std::optional<std::uint64_t>(64));
  CHECK(p->limit.timeout == std::chrono::milliseconds(2500));
  CHECK(p->limit.kill_grace == std::chrono::milliseconds(0));
  CHECK(p->landlock.abi_floor == 3);
  CHECK(p->landlock.seccomp_kill);
  CHECK(p->gvisor.runsc == project / "bin/runsc");
  CHECK(p->gvisor.platform == "ptrace");
  CHECK(p->container.runtime == "runc");
  CHECK(p->container.engine == "docker");
  CHECK(p->container.image == "debian:12");
  CHECK(p->microvm.kernel == "/boot/vmlinux");
  CHECK(p->microvm.rootfs == project / "images/rootfs.ext4");
  CHECK(p->microvm.vmm == "cloud-hypervisor");
  CHECK(p->config_path.empty());

  auto ts = p->languages.find("typescript");
  REQUIRE(ts);
  CHECK(ts->run == std::vector<std::string>{"tsx", "{src}"});
  CHECK(ts->source_file == "main.ts");  // fields not given keep the builtin's values
  auto py = p->languages.find("python");
  REQUIRE(py);
  CHECK(py->run == std::vector<std::string>{"python3", "-I", "{src}"});
  auto zig = p->languages.find("zig");
  REQUIRE(zig);
  CHECK(zig->compile_env_allowlist == std::vector<std::string>{"PATH", "ZIG_GLOBAL_CACHE_DIR"});
  auto rust = p->languages.find("rust");
  REQUIRE_FALSE(rust);
  CHECK_THAT(rust.error().message, Catch::Contains("disabled by the operator"));
  CHECK(p->languages.find("c"));  // untouched builtins stay
}

TEST_CASE("tier names and aliases", "[config]") {
  temp_dir project;
  for (auto [given, canonical] : std::vector<std::pair<std::string, std::string>>{
           {"tier0", "host"}, {"tier1", "container"}, {"tier2", "gvisor"}, {"tier3", "microvm"},
           {"landlock", "landlock"}, {"host", "host"}, {"e2b", "e2b"}, {"microvm", "microvm"}}) {
    auto p = parse("[sandbox]\ntier = \"" + given + "\"\n", project.path());
    REQUIRE(p);
    CHECK(p->tier == canonical);
  }
  auto empty = parse("", project.path());
  REQUIRE(empty);
  CHECK(empty->tier == "landlock");
  CHECK(empty->limit.timeout == limits{}.timeout);
}

TEST_CASE("roots are checked entry by entry", "[config]") {
  temp_dir project;
  fs::create_directories(project / "src");
  write_file(project / "file", "x");
  auto roots = [&](const std::string& key, const std::string& entry) {
    auto p = parse("[sandbox.roots]\n" + key + " = [\"" + entry + "\"]\n", project.path());
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("test.toml:2:") && Catch::Contains("sandbox.roots." + key));
    return p.error().message;
  };
  CHECK_THAT(roots("source_roots", "src:/src:rw"), Catch::Contains("read-only"));
  CHECK_THAT(roots("output_roots", "src:/out:ro"), Catch::Contains("writable"));
  CHECK_THAT(roots("source_roots", "src:/src:rx"), Catch::Contains("'ro' or 'rw'"));
  CHECK_THAT(roots("source_roots", "src"), Catch::Contains("host:virtual"));
  CHECK_THAT(roots("source_roots", "src:/"), Catch::Contains("must not be '/'"));
  CHECK_THAT(roots("source_roots", "src://"), Catch::Contains("must not be '/'"));
  CHECK_THAT(roots("source_roots", "src:src"), Catch::Contains("absolute"));
  CHECK_THAT(roots("source_roots", "src:/proc/x"), Catch::Contains("/proc"));
  CHECK_THAT(roots("source_roots", "src:/dev"), Catch::Contains("/proc, /dev or /sys"));
  CHECK_THAT(roots("output_roots", "src:/sys/fs"), Catch::Contains("/proc, /dev or /sys"));
  CHECK_THAT(roots("source_roots", "src:/a/../proc"), Catch::Contains("'..'"));
  CHECK_THAT(roots("source_roots", "missing:/m"), Catch::Contains("No such file"));
  CHECK_THAT(roots("source_roots", "src:/work"), Catch::Contains("scratch dir"));
  CHECK_THAT(roots("source_roots", "src:/etc"), Catch::Contains("system directories"));
  CHECK_THAT(roots("output_roots", "/etc:/x"), Catch::Contains("never granted writable"));
  CHECK_THAT(roots("source_roots", ":/f"), Catch::Contains("host path is empty"));

  auto dup = parse("[sandbox.roots]\nsource_roots = [\"src:/w\"]\noutput_roots = [\"src:/w/\"]\n", project.path());
  REQUIRE_FALSE(dup);
  CHECK_THAT(dup.error().message, Catch::Contains("test.toml:3:") && Catch::Contains("already at /w"));
}

TEST_CASE("protected paths inside a root are masked, through symlinks too, and refused only where no mask holds", "[config]") {
  temp_dir base;
  std::string project = base / "project";
  fs::create_directories(project + "/.git/hooks");
  fs::create_directories(project + "/src");
  fs::create_directories(base / "elsewhere/repo/sub/.git");
  auto mask_at = [](const profile& p, const std::string& inside) -> const path_mask* {
    for (auto& m : p.masks)
      if (m.virtual_path == inside) return &m;
    return nullptr;
  };

  SECTION("a root that is a symlink to the directory holding the config file hides the file") {
    std::string conf_dir = base / "conf";
    fs::create_directories(conf_dir);
    REQUIRE(::symlink(conf_dir.c_str(), (base / "link").c_str()) == 0);
    write_file(conf_dir + "/corral.toml", "[sandbox.roots]\nsource_roots = [\"" + (base / "link") + ":/conf\"]\n");
    auto p = load_profile(conf_dir + "/corral.toml", project);
    REQUIRE(p);
    auto m = mask_at(*p, "/conf/corral.toml");
    REQUIRE(m);
    CHECK(m->kind == mask_kind::hidden);
    CHECK(m->host_path == fs::canonical(conf_dir).string() + "/corral.toml");
    CHECK(m->what == "the config file");
  }
  SECTION("a root inside the project's .git is refused: the mask would be the whole root") {
    auto p = parse("[sandbox.roots]\nsource_roots = [\".git/hooks:/hooks\"]\n", project);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("lies inside") && Catch::Contains(".git directory") &&
                                      Catch::Contains("narrow the root"));
  }
  SECTION("a root that contains the project's .git keeps it read-only") {
    auto p = parse("[sandbox.roots]\noutput_roots = [\".:/proj\"]\n", project);
    REQUIRE(p);
    auto m = mask_at(*p, "/proj/.git");
    REQUIRE(m);
    CHECK(m->kind == mask_kind::read_only);
  }
  SECTION("a .git found below a root elsewhere is masked; a root that is one is refused") {
    auto p = parse("[sandbox.roots]\nsource_roots = [\"" + (base / "elsewhere") + ":/e\"]\n", project);
    REQUIRE(p);
    CHECK(mask_at(*p, "/e/repo/sub/.git"));
    p = parse("[sandbox.roots]\nsource_roots = [\"" + (base / "elsewhere/repo/sub/.git") + ":/e\"]\n", project);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("repo/sub/.git") && Catch::Contains(" is a .git directory"));
  }
  SECTION("an operator-listed path is hidden as a child, refused as a parent, followed through a symlink") {
    fs::create_directories(project + "/src/keys");
    REQUIRE(::symlink((project + "/src/keys").c_str(), (base / "keys-link").c_str()) == 0);
    auto p = parse("[sandbox]\nprotected_paths = [\"" + (base / "keys-link") + "\"]\n[sandbox.roots]\nsource_roots = [\"src:/src\"]\n",
                   project);
    REQUIRE(p);
    auto m = mask_at(*p, "/src/keys");
    REQUIRE(m);
    CHECK(m->kind == mask_kind::hidden);
    CHECK_THAT(m->what, Catch::Contains("sandbox.protected_paths"));
    p = parse("[sandbox]\nprotected_paths = [\"src\"]\n[sandbox.roots]\nsource_roots = [\"src/keys:/k\"]\n", project);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("lies inside"));
  }
  SECTION("a listed path that does not exist: nothing to cover in a read-only root, refused in a writable one") {
    auto p = parse("[sandbox]\nprotected_paths = [\"src/absent\"]\n[sandbox.roots]\nsource_roots = [\"src:/src\"]\n", project);
    REQUIRE(p);
    CHECK(p->masks.empty());
    p = parse("[sandbox]\nprotected_paths = [\"src/absent\"]\n[sandbox.roots]\noutput_roots = [\"src:/src\"]\n", project);
    REQUIRE_FALSE(p);
    CHECK_THAT(p.error().message, Catch::Contains("does not exist") && Catch::Contains("src/absent"));
  }
  SECTION("the runtime's state directory, masked by the runtime") {
    auto p = parse("[sandbox.roots]\nsource_roots = [\"src:/src\"]\n", project);
    REQUIRE(p);
    REQUIRE(mask_protected(*p, {project + "/elsewhere-state"}));
    CHECK(p->masks.empty());
    fs::create_directories(project + "/src/.corral-state");
    REQUIRE(mask_protected(*p, {project + "/src/.corral-state"}));
    auto m = mask_at(*p, "/src/.corral-state");
    REQUIRE(m);
    CHECK(m->what == "a path the runtime protects");
  }
  SECTION("a root holding a project without .git claims none") {
    temp_dir bare;
    fs::create_directories(bare / "sub");
    auto p = parse("[sandbox.roots]\noutput_roots = [\"" + bare.path() + ":/bare\"]\n", bare / "sub");
    REQUIRE(p);
    CHECK(p->masks.empty());
  }
  SECTION("a root that overlaps nothing is fine") {
    auto p = parse("[sandbox.roots]\nsource_roots = [\"src:/src\"]\n", project);
    REQUIRE(p);
    CHECK(p->source_roots.size() == 1);
    CHECK(p->masks.empty());
  }
}

TEST_CASE("requests tighten the profile and never widen it", "[config]") {
  temp_dir project;
  for (auto mode : {std::string("refuse"), std::string("clamp")}) {
    auto p = parse("[sandbox]\non_widen = \"" + mode +
                       "\"\n[sandbox.limits]\nmemory = \"512m\"\npids = 32\ncpu = 2\ntimeout = 10\noutput_cap = \"1m\"\n",
                   project.path());
    REQUIRE(p);
    limit_request tighter;
    tighter.memory_bytes = 256 * kMiB;
    tighter.pids = 8;
    tighter.cpu_cores = 0.5;
    tighter.timeout = std::chrono::milliseconds(1000);
    tighter.output_cap = 1024;
    auto t = tighten(*p, tighter);
    REQUIRE(t);
    CHECK(t->memory_bytes == std::optional<std::uint64_t>(256 * kMiB));
    CHECK(t->pids == std::optional<std::uint64_t>(8));
    CHECK(t->timeout == std::chrono::milliseconds(1000));
    CHECK(t->output_cap == 1024);

    limit_request wider;
    wider.memory_bytes = 4096 * kMiB;
    wider.timeout = std::chrono::milliseconds(60'000);
    auto w = tighten(*p, wider);
    if (mode == "refuse") {
      REQUIRE_FALSE(w);
      CHECK(w.error().kind == failure_kind::refused);
    } else {
      REQUIRE(w);
      CHECK(w->memory_bytes == std::optional<std::uint64_t>(512 * kMiB));
      CHECK(w->timeout == std::chrono::milliseconds(10'000));
    }
  }
}

TEST_CASE("the loaded profile is frozen: editing the file later changes nothing", "[config]") {
  temp_dir dir;
  write_file(dir / "corral.toml", "[sandbox]\ntier = \"host\"\n[sandbox.limits]\nmemory = \"512m\"\n");
  auto loaded = load_profile("", dir.path());
  REQUIRE(loaded);
  const profile frozen = *loaded;
  write_file(dir / "corral.toml", "[sandbox]\ntier = \"gvisor\"\n[sandbox.limits]\nmemory = \"8g\"\n");
  CHECK(frozen.tier == "host");
  CHECK(frozen.limit.memory_bytes == std::optional<std::uint64_t>(512 * kMiB));
  CHECK(loaded->tier == "host");
  auto again = load_profile("", dir.path());  // only an explicit reload sees the edit
  REQUIRE(again);
  CHECK(again->tier == "gvisor");
}

TEST_CASE("the workspaces table: values read, bad values named", "[config]") {
  temp_dir project;
  auto p = parse("[sandbox.workspaces]\ndir = \"ws\"\nmax_per_owner = 3\nmax_total = 9\n"
                 "idle_timeout = 90\nmax_lifetime = 3600\n",
                 project.path());
  REQUIRE(p);
  CHECK(p->workspaces.dir == project.path() + "/ws");  // relative to the file's directory
  CHECK(p->workspaces.max_per_owner == 3);
  CHECK(p->workspaces.max_total == 9);
  CHECK(p->workspaces.idle_timeout == std::chrono::seconds(90));
  CHECK(p->workspaces.max_lifetime == std::chrono::hours(1));
  CHECK(workspaces_dir(p->workspaces) == project.path() + "/ws");
  CHECK_THAT(rejection("[sandbox.workspaces]\nmax_total = 0\n"), Catch::Contains("sandbox.workspaces.max_total"));
  CHECK_THAT(rejection("[sandbox.workspaces]\nidle_timeout = 0\n"), Catch::Contains("sandbox.workspaces.idle_timeout"));
  CHECK_THAT(rejection("[sandbox.workspaces]\nsize = 1\n"), Catch::Contains("sandbox.workspaces.size"));
}

TEST_CASE("workspace templates: limits and env read, bad names and values named", "[config]") {
  temp_dir project;
  auto p = parse("[sandbox.workspaces.templates.small]\nmemory = \"256m\"\ncpu = 0.5\npids = 64\n"
                 "env = { MODE = \"small\" }\n[sandbox.workspaces.templates.plain]\n",
                 project.path());
  REQUIRE(p);
  REQUIRE(p->workspaces.templates.size() == 2);
  auto& small = p->workspaces.templates.at("small");
  CHECK(small.memory_bytes == std::optional<std::uint64_t>(256ull << 20));
  CHECK(small.cpu_cores == std::optional<double>(0.5));
  CHECK(small.pids == std::optional<std::uint64_t>(64));
  CHECK(small.env.at("MODE") == "small");
  CHECK(!p->workspaces.templates.at("plain").memory_bytes);
  CHECK_THAT(rejection("[sandbox.workspaces.templates.base]\n"), Catch::Contains("not \"base\""));
  CHECK_THAT(rejection("[sandbox.workspaces.templates.Big]\n"), Catch::Contains("sandbox.workspaces.templates.Big"));
  CHECK_THAT(rejection("[sandbox.workspaces.templates.t]\nmemory = \"1k\"\n"), Catch::Contains("floor"));
  CHECK_THAT(rejection("[sandbox.workspaces.templates.t]\ncpu = 0\n"), Catch::Contains("templates.t.cpu"));
  CHECK_THAT(rejection("[sandbox.workspaces.templates.t]\ndisk = 1\n"), Catch::Contains("templates.t.disk"));
  CHECK_THAT(rejection("[sandbox.workspaces.templates.t]\nenv = { \"A=B\" = \"x\" }\n"), Catch::Contains("templates.t.env"));
}

TEST_CASE("the mcp table: the gateway's policy read, bad values named with their key", "[config][mcp]") {
  temp_dir project;
  auto p = parse(R"([mcp]
default = "deny"
on_pin_change = "hide"
audit = "/var/log/corral/mcp.jsonl"
audit_args = true
audit_max = "1m"
tools.allow = ["read_*", "list_directory"]
tools.deny = ["write_file"]
tools.rules = [{ tool = "read_text_file", arg = "path", match = "^/project/" },
               { tool = "fetch", arg = "max_length", min = 1, max = 100, optional = true }]
tools.rate = ["search_*=30/m"]
tools.budget = 200
resources.allow = ["file:///project/*"]
prompts.deny = ["*"]
)",
                 project.path());
  REQUIRE(p);
  const auto& m = p->mcp;
  CHECK(m.default_deny);
  CHECK(m.on_pin_change == pin_action::hide);
  CHECK(m.audit == "/var/log/corral/mcp.jsonl");
  CHECK(m.audit_args);
  CHECK(m.audit_max_bytes == 1024 * 1024);
  CHECK(m.tools.allow.size() == 2);
  CHECK(m.tools.deny == std::vector<std::string>{"write_file"});
  REQUIRE(m.rules.size() == 2);
  CHECK(*m.rules[0].match == "^/project/");
  CHECK(*m.rules[1].max == 100);
  CHECK(m.rules[1].optional);
  REQUIRE(m.rates.size() == 1);
  CHECK(m.rates[0].calls == 30);
  CHECK(*m.budget == 200);
  CHECK(m.resources.allow.size() == 1);
  CHECK(m.prompts.deny.size() == 1);
  CHECK_FALSE(m.transparent());
  CHECK(parse("", project.path())->mcp.transparent());

  CHECK_THAT(rejection("[mcp]\ntools.allow = \"read_*\"\n"), Catch::Contains("mcp.tools.allow"));
  CHECK_THAT(rejection("[mcp]\ntools.rules = [{ tool = \"t\", arg = \"a\", match = \"(\" }]\n"),
             Catch::Contains("does not compile"));
  CHECK_THAT(rejection("[mcp]\ntools.rules = [{ tool = \"t\", arg = \"a\" }]\n"), Catch::Contains("exactly one of"));
  CHECK_THAT(rejection("[mcp]\ntools.rules = [{ tool = \"t\", arg = \"a\", under = \"/p\", colour = 1 }]\n"),
             Catch::Contains("colour"));
  CHECK_THAT(rejection("[mcp]\ntools.rate = [\"s=3/week\"]\n"), Catch::Contains("mcp.tools.rate"));
  CHECK_THAT(rejection("[mcp]\npin = \"sha256:xyz\"\n"), Catch::Contains("64 lower-case hex"));
  CHECK_THAT(rejection("[mcp]\ntools.budget = 0\n"), Catch::Contains("positive"));
  CHECK_THAT(rejection("[mcp]\nsurprise = 1\n"), Catch::Contains("surprise"));
}
