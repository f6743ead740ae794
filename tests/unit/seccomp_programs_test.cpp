// The seccomp programs the helper loads are constants generated when corral is built: they
// must be exactly what libseccomp makes of the rules now, for both deny actions.
#include <catch2/catch.hpp>

#include <linux/audit.h>
#include <linux/seccomp.h>

#include "tiers/exec_helper/seccomp_build/seccomp_rules.hpp"
#include "tiers/exec_helper/seccomp_filter.hpp"

using namespace corral;

namespace {

std::vector<sock_filter> generated(bool kill, seccomp_variant variant = seccomp_variant::jail) {
  auto prog = helper::seccomp_program(variant, kill);
  return {prog.filter, prog.filter + prog.len};
}

constexpr seccomp_variant kVariants[] = {seccomp_variant::jail, seccomp_variant::contained_open,
                                         seccomp_variant::contained_closed, seccomp_variant::contained_brokered};

bool same(const std::vector<sock_filter>& a, const std::vector<sock_filter>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].code != b[i].code || a[i].jt != b[i].jt || a[i].jf != b[i].jf || a[i].k != b[i].k) return false;
  return true;
}

bool returns(const std::vector<sock_filter>& p, std::uint32_t action) {
  for (auto& insn : p)
    if (insn.code == (BPF_RET | BPF_K) && (insn.k & SECCOMP_RET_ACTION_FULL) == action) return true;
  return false;
}

} // namespace

TEST_CASE("the generated seccomp programs are what libseccomp makes of the rules", "[unit][seccomp]") {
  for (auto variant : kVariants)
    for (bool kill : {false, true}) {
      INFO("kill: " << kill << ", variant " << static_cast<int>(variant));
      std::string error;
      auto fresh = seccomp_build::compile_filter(kill, variant, error);
      REQUIRE(error.empty());
      REQUIRE(!fresh.empty());
      CHECK(same(generated(kill, variant), fresh));
      // The first thing a program does is check the architecture: a foreign one is killed.
      CHECK(generated(kill, variant).front().code == (BPF_LD | BPF_W | BPF_ABS));
      CHECK(returns(generated(kill, variant), SECCOMP_RET_KILL_PROCESS));
      CHECK(returns(generated(kill, variant), SECCOMP_RET_ALLOW));
      // Only the brokered variant hands calls to a supervisor.
      CHECK(returns(generated(kill, variant), SECCOMP_RET_USER_NOTIF) ==
            (variant == seccomp_variant::contained_brokered));
    }
  // Each variant is a program of its own.
  for (auto a : kVariants)
    for (auto b : kVariants)
      if (a != b) CHECK(!same(generated(false, a), generated(false, b)));
  // The deny action differs: EPERM for one, and the other has no EPERM return.
  CHECK(returns(generated(false), SECCOMP_RET_ERRNO));
  CHECK(!same(generated(false), generated(true)));
}
