// Nodes across machines, on loopback: real `corral serve --node-listen` processes behind
// mutual TLS with certificates this test makes, a node_pool in this process, and every
// claim checked from outside (the node's processes in /proc, exit statuses, the refusal
// of a caller whose certificate the CA did not sign).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <netinet/in.h>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "proto/nodes/node_pool.hpp"
#include "proto/nodes/node_reach.hpp"
#include "proto/nodes/tls_error_queue.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;
using namespace corral::testing;
using namespace std::chrono_literals;

namespace {

// Waits for `pid` at most `bound`, then SIGKILLs and reaps it: a test never hangs on a child.
int reap(pid_t pid, std::chrono::milliseconds bound = 20s) {
  int status = 0;
  if (eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, bound)) return status;
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Runs a program with stdout and stderr in files; the exit status, or -1 if it overran.
int run_program(std::vector<std::string> args, const std::string& out_file, const std::string& cwd,
                std::chrono::milliseconds bound = 60s) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::chdir(cwd.c_str());
    ::unsetenv("CORRAL_ALLOW_HOST");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = reap(pid, bound);
  return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A CA, certificates it signs for nodes and callers, and a second CA with a caller of its
// own: made with the openssl CLI in a temp dir, EC P-256 so it takes milliseconds.
struct test_pki {
  testing::temp_dir dir{"corral-pki-"};

  static std::string skip_reason() {
    if (::system("openssl version >/dev/null 2>&1") != 0) return "no openssl command (scripts/setup installs it)";
    return {};
  }

  test_pki() {
    make_ca("ca");
    make_ca("rogue-ca");
    sign("node", "ca");
    sign("caller", "ca");
    sign("rogue-caller", "rogue-ca");
  }
  void openssl(const std::string& args) {
    auto cmd = "cd " + dir.path() + " && openssl " + args + " >>openssl.log 2>&1";
    INFO(cmd << "\n" << slurp(dir / "openssl.log"));
    REQUIRE(::system(cmd.c_str()) == 0);
  }
  void make_ca(const std::string& name) {
    openssl("req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name + ".key -out " +
            name + ".pem -days 2 -subj /CN=" + name);
  }
  void sign(const std::string& name, const std::string& ca) {
    openssl("req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + name + ".key -out " + name +
            ".csr -subj /CN=" + name);
    openssl("x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial -out " + name +
            ".pem -days 2");
  }
  node_tls credentials(const std::string& name, const std::string& ca = "ca") const {
    return {dir / (name + ".pem"), dir / (name + ".key"), dir / (ca + ".pem"), ""};
  }
};

// One `corral serve --node-listen 127.0.0.1:0` process, the bound port read from its stderr.
struct node_process {
  testing::temp_dir dir{"corral-node-"};
  node_tls tls;
  pid_t pid = -1;
  node_address address;
  int launches = 0;

  std::vector<std::string> extra_args;

  explicit node_process(const test_pki& pki) : node_process(pki.credentials("node")) {}
  explicit node_process(node_tls credentials, std::vector<std::string> extra = {})
      : tls(std::move(credentials)), extra_args(std::move(extra)) {
    launch(0);
  }

  // Starts `corral serve` on `port` (0: any free one) and this node's state dir, so a
  // restart sweeps what the killed process left, as it would on a real machine.
  void launch(std::uint16_t port) {
    auto log_file = dir / ("stderr-" + std::to_string(++launches) + ".log");  // never an earlier run's
    std::vector<std::string> args{CORRAL_TEST_CLI, "serve",        "--socket",    dir / "corral.sock",
                                  "--state-dir",   dir / "state",  "--node-listen", "127.0.0.1:" + std::to_string(port),
                                  "--node-cert",   tls.certificate, "--node-key",  tls.key,
                                  "--node-ca",     tls.ca_file};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 2);
      ::chdir(dir.path().c_str());
      ::unsetenv("CORRAL_ALLOW_HOST");
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    // std::regex is avoided: under the sanitizers g++ 12 warns inside its implementation.
    const std::string announced = "node listening on 127.0.0.1:";
    std::string log;
    std::size_t at = std::string::npos;
    bool up = eventually([&] {
      log = slurp(log_file);
      at = log.find(announced);
      return at != std::string::npos && log.find('\n', at) != std::string::npos;
    }, 20s);
    INFO("node stderr: " << log);
    REQUIRE(up);
    address = {"127.0.0.1", static_cast<std::uint16_t>(std::stoi(log.substr(at + announced.size())))};
  }
  // A test that failed half-way still leaves nothing: a node killed here has its leases
  // swept, so its sandboxed children go with it.
  ~node_process() {
    if (pid > 0) {
      stop(SIGKILL);
      sweep();
    }
  }
  // What a restarted node does first: a runtime on its state dir kills and removes the
  // cgroups its leases name.
  void sweep() {
    runtime_options ro;
    ro.exec_helper = CORRAL_TEST_HELPER;
    ro.state_dir = dir / "state";
    auto sweeper = runtime::start(std::move(ro));
    CHECK(sweeper);
  }
  int stop(int sig) {
    if (pid <= 0) return -1;
    ::kill(pid, sig);
    int status = reap(pid);
    pid = -1;
    return status;
  }
  std::string label() const { return address.label(); }
};

#define PKI_OR_SKIP()                     \
  auto why = test_pki::skip_reason();     \
  if (!why.empty()) {                     \
    WARN("skipped: " << why);             \
    return;                               \
  }

exec_request echo(const std::string& text) { return testing::program({"/bin/echo", text}); }

} // namespace

TEST_CASE("nodes: executions go to the least-loaded node - a SIGKILLed node fails its in-flight one, the survivor takes the rest", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  node_process a(pki), b(pki);
  node_pool_options o;
  o.nodes = {a.address, b.address};
  o.tls = pki.credentials("caller");
  auto pool = node_pool::connect(o);
  REQUIRE(pool);
  for (auto& s : (*pool)->status()) {
    INFO(s.node << ": " << s.unavailable_reason);
    CHECK(s.available);
    CHECK(s.load.capacity > 0);
    CHECK(s.load.tier == "landlock");
    CHECK(s.load.digest.rfind("sha256:", 0) == 0);
  }

  // Both run work, and every result names its node, tier, isolation and descriptor.
  std::set<std::string> used;
  for (int i = 0; i < 6; ++i) {
    auto placed = (*pool)->exec(echo("run " + std::to_string(i)));
    REQUIRE(placed);
    CHECK(placed->result.exit_code == 0);
    CHECK(placed->result.out.data == "run " + std::to_string(i) + "\n");
    CHECK(placed->result.tier == "landlock");
    CHECK(!placed->result.isolation.empty());
    CHECK(nlohmann::json::parse(placed->descriptor)["digest"] == placed->digest);
    used.insert(placed->node);
  }
  CHECK(used == std::set<std::string>{a.label(), b.label()});

  // One long execution; when it runs, kill its node.
  const std::string marker = "30.5252";
  std::promise<expected<placed_result>> in_flight;
  auto in_flight_result = in_flight.get_future();
  (*pool)->exec_async(testing::program({"sleep", marker}),
                      [&in_flight](expected<placed_result> r) { in_flight.set_value(std::move(r)); });
  REQUIRE(eventually([&] { return !with_arg(marker).empty(); }, 10s));
  std::string victim_label;
  for (auto& s : (*pool)->status())
    if (s.in_flight == 1) victim_label = s.node;
  REQUIRE((victim_label == a.label() || victim_label == b.label()));
  auto& victim = victim_label == a.label() ? a : b;
  auto& survivor = victim_label == a.label() ? b : a;
  victim.stop(SIGKILL);

  REQUIRE(in_flight_result.wait_for(30s) == std::future_status::ready);
  auto lost = in_flight_result.get();
  REQUIRE(!lost);
  INFO(lost.error().describe());
  CHECK(lost.error().message.find("node " + victim_label + " went away") != std::string::npos);
  CHECK(lost.error().message.find("did not run it again") != std::string::npos);

  for (int i = 0; i < 4; ++i) {
    auto placed = (*pool)->exec(echo("after " + std::to_string(i)));
    REQUIRE(placed);
    CHECK(placed->node == survivor.label());
    CHECK(placed->result.out.data == "after " + std::to_string(i) + "\n");
  }
  for (auto& s : (*pool)->status()) {
    CHECK(s.available == (s.node == survivor.label()));
    if (!s.available) CHECK(s.unavailable_reason.find("lost") != std::string::npos);
  }

  // The killed node's sandboxed child lives on in its cgroup until a runtime on the same
  // state dir sweeps its lease, as a restarted node would.
  victim.sweep();
  CHECK(eventually([&] { return with_arg(marker).empty(); }, 10s));
  pool->reset();
  int status = survivor.stop(SIGTERM);
  CHECK(WIFEXITED(status));
}

TEST_CASE("nodes: a caller whose certificate another CA signed is refused, and so is one without TLS", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  node_process node(pki);
  REQUIRE(tls_error_queue_repaired());
  // A caller connected before the strangers: their refused handshakes must not cut it off
  // (see proto/nodes/tls_error_queue.hpp).
  node_pool_options good;
  good.nodes = {node.address};
  good.tls = pki.credentials("caller");
  auto connected = node_pool::connect(good);
  REQUIRE(connected);
  REQUIRE((*connected)->exec(echo("before")));

  // Signed by a CA the node does not trust (the caller itself trusts the node's CA, so
  // only the node's check can refuse it).
  node_pool_options rogue;
  rogue.nodes = {node.address};
  rogue.tls = pki.credentials("rogue-caller");
  rogue.tls.ca_file = pki.dir / "ca.pem";
  {
    auto pool = node_pool::connect(rogue);
    REQUIRE(pool);
    auto s = (*pool)->status();
    REQUIRE(s.size() == 1);
    CHECK(!s[0].available);
    CHECK(s[0].unavailable_reason.find("cannot connect over TLS") != std::string::npos);
    auto placed = (*pool)->exec(echo("must not run"));
    REQUIRE(!placed);
    CHECK(placed.error().kind == failure_kind::tier_unavailable);
  }

  // Plain CAF middleman, no TLS at all.
  {
    caf::actor_system_config cfg;
    cfg.set("logger.verbosity", caf::atom("quiet"));
    cfg.load<caf::io::middleman>();
    add_node_message_types(cfg);
    caf::actor_system sys{cfg};
    auto plain = sys.middleman().remote_actor(node.address.host, node.address.port);
    CHECK(!plain);
  }

  // The node was up and serving all along: the caller connected before still runs
  // work, the right certificate gets through (the CLI too), and the refused attempts
  // ran nothing.
  for (int i = 0; i < 3; ++i) {
    auto placed = (*connected)->exec(echo("still connected"));
    INFO((placed ? "" : placed.error().describe()));
    REQUIRE(placed);
    CHECK(placed->result.out.data == "still connected\n");
  }
  CHECK(with_arg("must not run").empty());
  testing::temp_dir cwd{"corral-node-cli-"};
  auto tls = pki.credentials("caller");
  int code = run_program({CORRAL_TEST_CLI, "run", "--json", "--nodes", node.label(), "--node-cert", tls.certificate,
                          "--node-key", tls.key, "--node-ca", tls.ca_file, "--", "/bin/echo", "via node"},
                         cwd / "out", cwd.path());
  auto out = slurp(cwd / "out");
  INFO(out);
  REQUIRE(code == 0);
  auto j = nlohmann::json::parse(out.substr(out.find('{')));
  CHECK(j["stdout"] == "via node\n");
  CHECK(j["node"] == node.label());
  CHECK(j["tier"] == "landlock");
  CHECK(j["node_descriptor"]["digest"].get<std::string>().rfind("sha256:", 0) == 0);
  CHECK(WIFEXITED(node.stop(SIGTERM)));
}

TEST_CASE("nodes: no TCP port without mutual TLS - bad credentials are named before anything listens", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  testing::temp_dir cwd{"corral-node-refuse-"};
  int code = run_program({CORRAL_TEST_CLI, "serve", "--socket", cwd / "s.sock", "--state-dir", cwd / "state",
                          "--node-listen", "127.0.0.1:0"},
                         cwd / "out", cwd.path(), 30s);
  auto out = slurp(cwd / "out");
  INFO(out);
  CHECK(code == 125);
  CHECK(out.find("no TLS certificate given") != std::string::npos);
  CHECK(out.find("node listening") == std::string::npos);

  auto mismatched = pki.credentials("node");
  mismatched.key = pki.dir / "caller.key";
  auto checked = check_node_tls(mismatched);
  REQUIRE(!checked);
  CHECK(checked.error().message.find("does not belong to the certificate") != std::string::npos);
  CHECK(check_node_tls(pki.credentials("node")));

  CHECK(!parse_node_address("127.0.0.1:0"));
  CHECK(parse_node_address("127.0.0.1:0", true));
  CHECK(!parse_node_address("::1:80"));
  auto v6 = parse_node_address("[::1]:80");
  REQUIRE(v6);
  CHECK(v6->label() == "[::1]:80");
}

TEST_CASE("nodes: TLS files without --node-listen are refused, not silently ignored", "[node]") {
  testing::temp_dir cwd{"corral-node-nolisten-"};
  int code = run_program({CORRAL_TEST_CLI, "serve", "--socket", cwd / "s.sock", "--state-dir", cwd / "state",
                          "--node-cert", cwd / "node.pem", "--node-ca", cwd / "ca.pem"},
                         cwd / "out", cwd.path(), 30s);
  auto out = slurp(cwd / "out");
  INFO(out);
  CHECK(code == 125);
  CHECK(out.find("only apply with --node-listen") != std::string::npos);
  CHECK(!testing::exists(cwd / "s.sock"));  // refused before anything listens
}

TEST_CASE("nodes: a caller that dies mid-execution has it ended on the node - the node keeps serving", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  node_process node(pki);
  testing::temp_dir cwd{"corral-node-gone-"};
  auto tls = pki.credentials("caller");
  const std::string marker = "41.7171";
  pid_t caller = ::fork();
  REQUIRE(caller >= 0);
  if (caller == 0) {
    int fd = ::open((cwd / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<std::string> args{CORRAL_TEST_CLI, "run", "--nodes", node.label(),
                                  "--node-cert", tls.certificate, "--node-key", tls.key, "--node-ca", tls.ca_file,
                                  "--", "sleep", marker};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // The attempt ran: the node started the program for this caller.
  bool started = eventually([&] { return !with_arg(marker).empty(); }, 20s);
  INFO("caller output: " << slurp(cwd / "out"));
  if (!started) reap(caller, 1ms);
  REQUIRE(started);
  ::kill(caller, SIGKILL);
  reap(caller);

  // Nobody can read its result now: the node ends it well before the profile's 30 s
  // timeout, without a restart or a sweep.
  CHECK(eventually([&] { return with_arg(marker).empty(); }, 10s));

  node_pool_options o;
  o.nodes = {node.address};
  o.tls = tls;
  auto pool = node_pool::connect(o);
  REQUIRE(pool);
  auto placed = (*pool)->exec(echo("still serving"));
  REQUIRE(placed);
  CHECK(placed->result.out.data == "still serving\n");
  for (auto& s : (*pool)->status()) CHECK(s.load.running == 0);
  pool->reset();
  CHECK(WIFEXITED(node.stop(SIGTERM)));
}

TEST_CASE("nodes: a node down at connect, or lost later, rejoins the pool when it is back on its address", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  node_process a(pki), b(pki);
  CHECK(WIFEXITED(b.stop(SIGTERM)));  // b's address is known, and nothing listens there

  node_pool_options o;
  o.nodes = {a.address, b.address};
  o.tls = pki.credentials("caller");
  o.reconnect = {200ms, 1s};
  auto pool = node_pool::connect(o);
  REQUIRE(pool);
  auto status_of = [&](const node_process& n) {
    for (auto& s : (*pool)->status())
      if (s.node == n.label()) return s;
    FAIL("no status for " << n.label());
    return node_status{};
  };
  auto runs_on_both = [&] {
    std::set<std::string> used;
    for (int i = 0; i < 6; ++i) {
      auto placed = (*pool)->exec(echo("spread " + std::to_string(i)));
      INFO((placed ? "" : placed.error().describe()));
      REQUIRE(placed);
      CHECK(placed->result.out.data == "spread " + std::to_string(i) + "\n");
      used.insert(placed->node);
    }
    return used == std::set<std::string>{a.label(), b.label()};
  };

  // Down from the start: unavailable with the reason, tried again in the background
  // (the attempt ran, and failed), and work goes to the node that is up.
  auto down = status_of(b);
  INFO(down.unavailable_reason);
  CHECK(!down.available);
  CHECK(down.unavailable_reason.find("cannot reach") != std::string::npos);
  CHECK(eventually([&] { return status_of(b).unavailable_reason.find("tried again") != std::string::npos; }, 10s));
  auto placed = (*pool)->exec(echo("while b is down"));
  REQUIRE(placed);
  CHECK(placed->node == a.label());

  // b comes up on its address: the pool finds it without being told, and uses it.
  b.launch(b.address.port);
  CHECK(eventually([&] { return status_of(b).available; }, 15s));
  CHECK(runs_on_both());

  // a is killed and restarted: lost in between, back afterwards.
  auto a_port = a.address.port;
  a.stop(SIGKILL);
  CHECK(eventually([&] { return !status_of(a).available; }, 15s));
  CHECK(status_of(a).unavailable_reason.find("lost") != std::string::npos);
  placed = (*pool)->exec(echo("while a is down"));
  REQUIRE(placed);
  CHECK(placed->node == b.label());
  a.launch(a_port);
  CHECK(eventually([&] { return status_of(a).available; }, 15s));
  CHECK(runs_on_both());

  pool->reset();
  CHECK(WIFEXITED(a.stop(SIGTERM)));
  CHECK(WIFEXITED(b.stop(SIGTERM)));
}

TEST_CASE("nodes: an address that never answers is reported within the probe's bound", "[node]") {
  // A listener whose accept queue is full drops new SYNs, as a host behind a firewall
  // that drops packets would: a connect there waits for the kernel's retries.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto sa = testing::bind_loopback(listener);
  REQUIRE(::listen(listener, 0) == 0);
  node_address silent{"127.0.0.1", ntohs(sa.sin_port)};
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {  // fill the queue; later ones hang in SYN_SENT
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    fillers.push_back(fd);
  }
  ::usleep(100'000);

  auto began = std::chrono::steady_clock::now();
  auto why = probe_tcp(silent, 300ms);
  auto took = std::chrono::steady_clock::now() - began;
  INFO(why);
  CHECK(why.find("no answer within 300 ms") != std::string::npos);
  CHECK(took < 5s);  // a bound, not a performance figure: without the probe it is minutes

  int closed = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // a port that was bound, then closed
  node_address refused{"127.0.0.1", ntohs(testing::bind_loopback(closed).sin_port)};
  ::close(closed);
  CHECK(probe_tcp(refused, 300ms).find("refused") != std::string::npos);

  for (int fd : fillers) ::close(fd);
  ::close(listener);
}

TEST_CASE("nodes: an encrypted key opens with its passphrase from a private file - without one the key is named", "[node]") {
  PKI_OR_SKIP();
  test_pki pki;
  auto write_secret = [&](const std::string& name, const std::string& text, mode_t mode) {
    auto path = pki.dir / name;
    std::ofstream(path) << text;
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    return path;
  };
  auto pass = write_secret("pass", "correct horse\n", 0600);
  pki.openssl("pkey -in node.key -aes256 -passout file:pass -out node-enc.key");
  pki.openssl("pkey -in caller.key -aes256 -passout file:pass -out caller-enc.key");

  // The file: owner-only, one line, the newline not part of it.
  auto read = read_passphrase_file(pass);
  REQUIRE(read);
  CHECK(*read == "correct horse");
  auto shared = read_passphrase_file(write_secret("shared", "correct horse\n", 0640));
  REQUIRE(!shared);
  CHECK(shared.error().message.find("mode 0640") != std::string::npos);
  CHECK(shared.error().message.find("chmod 600") != std::string::npos);
  CHECK(!read_passphrase_file(write_secret("empty", "\n", 0600)));
  CHECK(!read_passphrase_file(write_secret("nul", std::string("a\0b", 3), 0600)));
  CHECK(read_passphrase_file(write_secret("longest", std::string(1023, 'x') + "\n", 0600)));
  CHECK(!read_passphrase_file(write_secret("long", std::string(1024, 'x'), 0600)));
  REQUIRE(::symlink(pass.c_str(), (pki.dir / "link").c_str()) == 0);
  CHECK(!read_passphrase_file(pki.dir / "link"));
  CHECK(!read_passphrase_file(pki.dir / "missing"));

  // The key: without its passphrase it is named, not prompted for on a terminal; with a
  // wrong one it is refused; with the right one it loads.
  auto tls = pki.credentials("node");
  tls.key = pki.dir / "node-enc.key";
  auto without = check_node_tls(tls);
  REQUIRE(!without);
  CHECK(without.error().message.find("--node-key-passphrase-file") != std::string::npos);
  tls.passphrase = "wrong horse";
  auto wrong = check_node_tls(tls);
  REQUIRE(!wrong);
  CHECK(wrong.error().message.find("passphrase is not the key's") != std::string::npos);
  tls.passphrase = "correct horse";
  CHECK(check_node_tls(tls));

  // Both ends with encrypted keys, through the CLI: a node serves, a caller runs on it.
  testing::temp_dir cwd{"corral-node-enc-"};
  node_process node(tls, {"--node-key-passphrase-file", pass});
  auto caller = pki.credentials("caller");
  int code = run_program({CORRAL_TEST_CLI, "run", "--nodes", node.label(), "--node-cert", caller.certificate,
                          "--node-key", pki.dir / "caller-enc.key", "--node-key-passphrase-file", pass, "--node-ca",
                          caller.ca_file, "--", "/bin/echo", "encrypted both ways"},
                         cwd / "out", cwd.path());
  auto out = slurp(cwd / "out");
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("encrypted both ways") != std::string::npos);
  CHECK(WIFEXITED(node.stop(SIGTERM)));

  // Without --nodes the node flags are refused, not ignored.
  code = run_program({CORRAL_TEST_CLI, "run", "--node-cert", caller.certificate, "--", "/bin/true"}, cwd / "out",
                     cwd.path());
  CHECK(code == 125);
  CHECK(slurp(cwd / "out").find("only apply with --nodes") != std::string::npos);
}
