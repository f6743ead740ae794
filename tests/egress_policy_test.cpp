// The egress policy without a proxy: entry parsing, address classes, the decision order
// (deny, allow, address), request narrowing, the profile's [sandbox.network] table and
// --allow-net.
#include <cstdio>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "config/address_class.hpp"
#include "config/egress_decision.hpp"
#include "config/tighten_network.hpp"
#include "config/toml_profile.hpp"
#include "proto/describe/machine_report.hpp"
#include "proto/jsonrpc/exec_params.hpp"
#include "tiers/default_tiers.hpp"
#include "tests/runtime_fixture.hpp"

using namespace corral;

namespace {

network_rule allow_rule(const std::string& e) {
  auto r = parse_network_rule(e, rule_list::allow);
  INFO(e);
  REQUIRE(r);
  return *r;
}

egress_lists lists(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
  egress_lists l;
  for (auto& a : allow) l.allow.push_back(allow_rule(a));
  for (auto& d : deny) {
    auto r = parse_network_rule(d, rule_list::deny);
    REQUIRE(r);
    l.deny.push_back(*r);
  }
  return l;
}

ip_address ip(const std::string& s) {
  auto a = parse_ip_address(s);
  REQUIRE(a);
  return *a;
}

std::string rejection_of(const std::string& entry) {
  auto r = parse_network_rule(entry, rule_list::allow);
  INFO(entry);
  REQUIRE_FALSE(r);
  return r.error().message;
}

} // namespace

TEST_CASE("network entries parse into names, wildcards and ranges with ports", "[egress]") {
  auto exact = allow_rule("PyPI.org.");
  CHECK(exact.pattern == host_pattern::exact_name);
  CHECK(exact.name == "pypi.org");
  CHECK(exact.ports == std::vector<std::uint16_t>{80, 443});
  CHECK(exact.text == "pypi.org");

  auto wild = allow_rule("*.pythonhosted.org");
  CHECK(wild.pattern == host_pattern::name_suffix);
  CHECK(rule_matches_name(wild, "files.pythonhosted.org"));
  CHECK(rule_matches_name(wild, "a.b.pythonhosted.org"));
  CHECK_FALSE(rule_matches_name(wild, "pythonhosted.org"));
  CHECK_FALSE(rule_matches_name(wild, "evilpythonhosted.org"));

  auto ported = allow_rule("api.github.com:443");
  CHECK(ported.ports == std::vector<std::uint16_t>{443});
  CHECK(ported.text == "api.github.com:443");

  auto cidr = allow_rule("10.1.2.0/24:5432");
  CHECK(cidr.pattern == host_pattern::address_range);
  CHECK(cidr.prefix == 24);
  CHECK(rule_matches_address(cidr, ip("10.1.2.77")));
  CHECK_FALSE(rule_matches_address(cidr, ip("10.1.3.1")));
  CHECK(cidr.text == "10.1.2.0/24:5432");

  CHECK(allow_rule("127.0.0.1").prefix == 32);
  CHECK(allow_rule("::1").prefix == 128);
  auto v6 = allow_rule("[fc00::/7]:8443");
  CHECK(v6.prefix == 7);
  CHECK(v6.text == "[fc00::/7]:8443");

  // A deny entry without a port closes every port.
  auto deny = parse_network_rule("uploads.github.com", rule_list::deny);
  REQUIRE(deny);
  CHECK(deny->ports.empty());
  CHECK(rule_matches_port(*deny, 22));
}

TEST_CASE("malformed network entries are refused with the reason", "[egress]") {
  CHECK_THAT(rejection_of(""), Catch::Contains("must not be empty"));
  CHECK_THAT(rejection_of("pypi.org:0"), Catch::Contains("1 to 65535"));
  CHECK_THAT(rejection_of("pypi.org:70000"), Catch::Contains("1 to 65535"));
  CHECK_THAT(rejection_of("pypi.org:http"), Catch::Contains("is not a number"));
  CHECK_THAT(rejection_of("*.org"), Catch::Contains("at least two labels"));
  CHECK_THAT(rejection_of("a.*.org"), Catch::Contains("whole first label"));
  CHECK_THAT(rejection_of("exa mple.org"), Catch::Contains("not a valid host name"));
  CHECK_THAT(rejection_of("-bad.org"), Catch::Contains("not a valid host name"));
  CHECK_THAT(rejection_of("10.1.2.5/24"), Catch::Contains("did you mean 10.1.2.0/24"));
  CHECK_THAT(rejection_of("10.0.0.0/33"), Catch::Contains("0..32"));
  CHECK_THAT(rejection_of("300.1.1.1/8"), Catch::Contains("not an IP address"));
  CHECK_THAT(rejection_of("[fc00::/7"), Catch::Contains("without ']'"));
  CHECK_THAT(rejection_of("[pypi.org]:443"), Catch::Contains("IPv6"));
}

TEST_CASE("special address ranges are classified, mapped IPv4 by what it carries", "[egress]") {
  CHECK(classify(ip("8.8.8.8")).kind == address_class::public_internet);
  CHECK(classify(ip("127.0.0.1")).kind == address_class::loopback);
  CHECK(classify(ip("10.9.8.7")).kind == address_class::private_lan);
  CHECK(classify(ip("172.31.255.255")).kind == address_class::private_lan);
  CHECK(classify(ip("172.32.0.1")).kind == address_class::public_internet);
  CHECK(classify(ip("192.168.1.1")).kind == address_class::private_lan);
  CHECK(classify(ip("100.64.0.1")).kind == address_class::shared_cgnat);
  CHECK(classify(ip("100.128.0.1")).kind == address_class::public_internet);
  CHECK(classify(ip("169.254.169.254")).kind == address_class::link_local);
  CHECK(classify(ip("224.0.0.251")).kind == address_class::multicast);
  CHECK(classify(ip("0.0.0.0")).kind == address_class::unspecified);
  CHECK(classify(ip("255.255.255.255")).kind == address_class::reserved);
  CHECK(classify(ip("::")).kind == address_class::unspecified);
  CHECK(classify(ip("::1")).kind == address_class::loopback);
  CHECK(classify(ip("fd12::1")).kind == address_class::unique_local);
  CHECK(classify(ip("fe80::1")).kind == address_class::link_local);
  CHECK(classify(ip("ff02::1")).kind == address_class::multicast);
  CHECK(classify(ip("2001:4860::8888")).kind == address_class::public_internet);
  CHECK(classify(ip("::ffff:127.0.0.1")).kind == address_class::loopback);
  CHECK(classify(ip("::ffff:169.254.169.254")).kind == address_class::link_local);
  CHECK(classify(ip("64:ff9b::10.0.0.1")).kind == address_class::private_lan);
  CHECK(classify(ip("::ffff:8.8.8.8")).kind == address_class::public_internet);
}

TEST_CASE("the decision checks deny, then allow, then every address", "[egress]") {
  auto l = lists({"pypi.org", "*.github.com", "db.internal:5432", "127.0.0.1/32:8080"},
                 {"uploads.github.com"});
  CHECK(check_destination(l, "pypi.org", 443).allowed());
  CHECK(check_destination(l, "PYPI.ORG.", 80).allowed());
  CHECK(check_destination(l, "pypi.org", 443).rule == "pypi.org");

  auto other_port = check_destination(l, "pypi.org", 22);
  CHECK(other_port.outcome == egress_outcome::not_on_allowlist);
  CHECK_THAT(other_port.reason, Catch::Contains("pypi.org:22") && Catch::Contains("[sandbox.network] allow"));

  auto denied = check_destination(l, "uploads.github.com", 443);
  CHECK(denied.outcome == egress_outcome::denied_by_rule);
  CHECK(denied.rule == "uploads.github.com");
  CHECK_THAT(denied.reason, Catch::Contains("[sandbox.network] deny"));
  CHECK(check_destination(l, "api.github.com", 443).allowed());
  CHECK(check_destination(l, "github.com", 443).outcome == egress_outcome::not_on_allowlist);
  CHECK(check_destination(l, "example.org", 443).outcome == egress_outcome::not_on_allowlist);
  CHECK(check_destination(l, "bad name", 443).outcome == egress_outcome::malformed);

  // A name allowed but resolving to a special address: refused unless a range names it.
  auto rebind = check_resolved(l, "pypi.org", 443, {ip("151.101.0.223"), ip("169.254.169.254")});
  CHECK(rebind.outcome == egress_outcome::address_refused);
  CHECK_THAT(rebind.reason, Catch::Contains("link-local") && Catch::Contains("169.254.169.254/32:443"));
  CHECK(check_resolved(l, "pypi.org", 443, {ip("127.0.0.1")}).outcome == egress_outcome::address_refused);
  CHECK(check_resolved(l, "pypi.org", 443, {ip("151.101.0.223")}).allowed());
  CHECK(check_resolved(l, "pypi.org", 443, {}).outcome == egress_outcome::unresolved);
  // The loopback range named with its port admits exactly that.
  auto local = lists({"app.test:8080", "127.0.0.1/32:8080"});
  CHECK(check_resolved(local, "app.test", 8080, {ip("127.0.0.1")}).allowed());
  CHECK(check_resolved(local, "app.test", 8080, {ip("127.0.0.2")}).outcome == egress_outcome::address_refused);

  // IP literals pass only through an address entry.
  CHECK(check_destination(l, "127.0.0.1", 8080).allowed());
  CHECK(check_destination(l, "127.0.0.1", 8081).outcome == egress_outcome::not_on_allowlist);
  CHECK(check_destination(l, "151.101.0.223", 443).outcome == egress_outcome::not_on_allowlist);
  // A broad range does not "name" the metadata block.
  auto everything = lists({"0.0.0.0/0"});
  CHECK(check_destination(everything, "151.101.0.223", 443).allowed());
  CHECK(check_destination(everything, "169.254.169.254", 80).outcome == egress_outcome::address_refused);
  CHECK(check_destination(everything, "10.0.0.1", 80).outcome == egress_outcome::address_refused);
  // Deny ranges win over allow ranges.
  auto carved = lists({"10.0.0.0/8:5432"}, {"10.9.0.0/16"});
  CHECK(check_destination(carved, "10.1.0.1", 5432).allowed());
  CHECK(check_destination(carved, "10.9.0.1", 5432).outcome == egress_outcome::denied_by_rule);
  CHECK(check_resolved(carved, "10.1.0.1", 5432, {ip("10.1.0.1")}).allowed());
}

TEST_CASE("a request narrows the profile's allow-list and never widens it", "[egress]") {
  profile p;
  p.network = network_mode::allowlist;
  p.egress = lists({"*.github.com", "pypi.org:443", "10.0.0.0/8:5432"}, {"uploads.github.com"});

  auto same = tighten_network(p, std::nullopt);
  REQUIRE(same);
  CHECK(same->allow.size() == 3);

  auto narrow = tighten_network(p, std::vector<std::string>{"api.github.com", "pypi.org:443", "10.1.0.0/16:5432"});
  REQUIRE(narrow);
  CHECK(narrow->allow.size() == 3);
  CHECK(narrow->deny.size() == 1);
  CHECK(check_destination(*narrow, "api.github.com", 443).allowed());
  CHECK(check_destination(*narrow, "raw.github.com", 443).outcome == egress_outcome::not_on_allowlist);

  for (std::string wider : {"github.com", "pypi.org", "pypi.org:80", "10.0.0.0/7:5432", "example.org"}) {
    auto r = tighten_network(p, std::vector<std::string>{wider});
    INFO(wider);
    REQUIRE_FALSE(r);
    CHECK(r.error().kind == failure_kind::refused);
    CHECK_THAT(r.error().message, Catch::Contains("not covered"));
  }
  p.on_widen = widen_policy::clamp;
  auto clamped = tighten_network(p, std::vector<std::string>{"example.org", "api.github.com"});
  REQUIRE(clamped);
  REQUIRE(clamped->allow.size() == 1);
  CHECK(clamped->allow[0].text == "api.github.com");

  profile none;
  auto refused = tighten_network(none, std::vector<std::string>{"pypi.org"});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == failure_kind::refused);
}

TEST_CASE("the sandbox.network table reads the three modes and rejects what it cannot mean", "[egress]") {
  corral::testing::temp_dir project;
  auto parse = [&](const std::string& text) { return load_profile_from_string(text, "t.toml", project.path()); };

  auto legacy = parse("[sandbox]\nnetwork = \"host\"\n");
  REQUIRE(legacy);
  CHECK(legacy->network == network_mode::host);

  auto table = parse("[sandbox.network]\nmode = \"allowlist\"\nallow = [\"pypi.org\", \"*.pythonhosted.org\", "
                     "\"api.github.com:443\", \"10.1.2.0/24:5432\"]\ndeny = [\"uploads.github.com\"]\n");
  REQUIRE(table);
  CHECK(table->network == network_mode::allowlist);
  CHECK(table->egress.allow.size() == 4);
  CHECK(table->egress.deny.size() == 1);

  auto none = parse("[sandbox.network]\nmode = \"none\"\n");
  REQUIRE(none);
  CHECK(none->network == network_mode::none);

  auto fails = [&](const std::string& text, const std::string& part) {
    auto p = parse(text);
    INFO(text);
    REQUIRE_FALSE(p);
    CHECK(p.error().kind == failure_kind::config_error);
    CHECK_THAT(p.error().message, Catch::Contains(part));
  };
  fails("[sandbox]\nnetwork = \"allowlist\"\n", "is not one of");
  fails("[sandbox.network]\nmode = \"open\"\n", "is not one of");
  fails("[sandbox.network]\nmode = \"allowlist\"\nalow = [\"x.org\"]\n", "unknown key 'sandbox.network.alow'");
  fails("[sandbox.network]\nmode = \"allowlist\"\n", "needs a non-empty allow list");
  fails("[sandbox.network]\nmode = \"host\"\nallow = [\"pypi.org\"]\n", "only with mode = \"allowlist\"");
  fails("[sandbox.network]\nallow = [\"pypi.org\"]\n", "only with mode = \"allowlist\"");
  fails("[sandbox.network]\nmode = \"allowlist\"\nallow = [\"10.1.2.5/24\"]\n", "t.toml:3:");
  fails("[sandbox.network]\nmode = \"allowlist\"\nallow = [\"10.1.2.5/24\"]\n", "sandbox.network.allow");
  fails("[sandbox.network]\nmode = \"allowlist\"\nallow = [\"*.org\"]\n", "two labels");
  fails("[sandbox.network]\nmode = \"allowlist\"\nallow = \"pypi.org\"\n", "an array of strings");
}

TEST_CASE("the --allow-net flag sets the allow-list for one invocation", "[egress]") {
  // The CLI binary: exit status and what it printed (stdout and stderr together).
  auto cli = [](const std::string& args) {
    std::string out;
    FILE* f = ::popen((std::string(CORRAL_TEST_CLI) + " " + args + " 2>&1 </dev/null").c_str(), "r");
    REQUIRE(f);
    char buf[4096];
    while (auto n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    int status = ::pclose(f);
    return std::pair<int, std::string>{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  };
  auto empty = cli("run --allow-net pypi.org,,x.org -- /bin/true");
  CHECK(empty.first == 125);
  CHECK_THAT(empty.second, Catch::Contains("--allow-net") && Catch::Contains("must not be empty"));
  auto bad = cli("run --allow-net '10.0.0.1/8' -- /bin/true");
  CHECK(bad.first == 125);
  CHECK_THAT(bad.second, Catch::Contains("did you mean 10.0.0.0/8"));
  // The flag reaches the profile: the host tier then refuses the allow-list.
  auto applied = cli("run --allow-net pypi.org --tier host --allow-host -- /bin/true");
  CHECK(applied.first == 125);
  CHECK_THAT(applied.second, Catch::Contains("host tier cannot enforce a network allow-list"));
}

TEST_CASE("tiers that cannot hold an allow-list refuse it instead of falling back", "[egress]") {
  // Host tier: it would hand the program the host's whole network.
  auto p = corral::testing::test_runtime::host_profile();
  p.network = network_mode::allowlist;
  p.egress = lists({"pypi.org"});
  corral::testing::test_runtime host(p);
  auto r = host.run(corral::testing::program({"/bin/true"}));
  REQUIRE_FALSE(r);
  CHECK(r.error().kind == failure_kind::refused);
  CHECK_THAT(r.error().message, Catch::Contains("host tier cannot enforce a network allow-list"));

  // The other tiers, asked for per request: the planner refuses before any preflight runs.
  for (std::string tier : {"gvisor", "container", "microvm"}) {
    auto req = corral::testing::program({"/bin/true"});
    req.tier = tier;
    auto refused = host.run(req);
    INFO(tier);
    REQUIRE_FALSE(refused);
    // A tier whose preflight fails here is refused by the registry first: refused either way.
    if (refused.error().kind == failure_kind::tier_unavailable) continue;
    CHECK(refused.error().kind == failure_kind::refused);
    CHECK_THAT(refused.error().message, Catch::Contains(tier + " tier cannot enforce a network allow-list"));
  }
}

TEST_CASE("the daemon's exec takes network_allow to narrow the list", "[egress]") {
  auto p = exec_params_from_json({{"argv", {"true"}}, {"network_allow", {"api.github.com", "pypi.org:443"}}});
  REQUIRE(p);
  REQUIRE(p->request.network_allow);
  CHECK(*p->request.network_allow == std::vector<std::string>{"api.github.com", "pypi.org:443"});
  CHECK(exec_params_to_json(p->request, true)["network_allow"] == nlohmann::json({"api.github.com", "pypi.org:443"}));
  auto bad = exec_params_from_json({{"argv", {"true"}}, {"network_allow", "pypi.org"}});
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("network_allow"));
}

TEST_CASE("doctor and capabilities show which tiers would refuse an allow-list profile", "[egress]") {
  auto p = corral::testing::test_runtime::host_profile();
  p.network = network_mode::allowlist;
  p.egress = lists({"pypi.org"});
  auto features = detect_kernel_features();
  auto tiers = build_default_tiers(p, features);
  auto report = machine_report(features, *tiers, selection_policy{}, &p);
  int seen = 0;
  for (auto& t : report["tiers"]) {
    auto name = t["name"].get<std::string>();
    INFO(name);
    if (name == "landlock") {
      CHECK_FALSE(t.contains("refused"));  // the one tier that holds it
      ++seen;
    } else if (name == "gvisor" || name == "container" || name == "microvm") {
      REQUIRE(t.contains("refused"));
      CHECK_THAT(t["refused"].get<std::string>(), Catch::Contains(name + " tier cannot enforce a network allow-list"));
      ++seen;
    }
  }
  CHECK(seen == 4);
  // Without the profile (or with one in mode none) nothing is refused for it.
  p.network = network_mode::none;
  auto plain = machine_report(features, *tiers, selection_policy{}, &p);
  for (auto& t : plain["tiers"])
    if (t["name"] != "host") CHECK_FALSE(t.contains("refused"));
}
