#include "actors/runtime.hpp"

#include "config/companion_program.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/leases/cgroup_lease.hpp"
#include "actors/execution_messages.hpp"
#include "actors/io/io_loop.hpp"
#include "actors/launch/child_launcher.hpp"
#include "actors/leases/process_group_lease.hpp"
#include "actors/supervisor.hpp"
#include "actors/workspaces/workspace_registry.hpp"
#include "actors/leases/workspace_share_lease.hpp"
#include "config/protected_paths.hpp"
#include "tiers/cgroups/cgroup_delegation.hpp"
#include "tiers/cgroups/cgroup_set.hpp"
#include "tiers/default_tiers.hpp"
#include "tiers/state_dir/instance_claim.hpp"
#include "tiers/state_dir/lease_record.hpp"

#ifndef CORRAL_INSTALLED_HELPER
#define CORRAL_INSTALLED_HELPER "/usr/local/libexec/corral/corral-exec"
#endif

namespace corral {

namespace {

caf::actor_system_config make_config() {
  caf::actor_system_config cfg;
  // The runtime mostly waits for I/O; the sharing scheduler wakes a worker at once where
  // work stealing polls and sleeps (about 100 µs vs 40 µs per request/response here).
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("logger.verbosity", caf::atom("quiet"));
  return cfg;
}

expected<std::string> prepare_state_dir(std::string dir) {
  if (dir.empty()) {
    if (::geteuid() == 0) {
      dir = "/run/corral";
    } else if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg && *xdg) {
      dir = std::string(xdg) + "/corral";
    } else {
      dir = "/tmp/corral-" + std::to_string(::geteuid());
    }
  }
  for (auto& sub : {std::string(), std::string("/scratch"), std::string("/leases")}) {
    auto path = dir + sub;
    if (::mkdir(path.c_str(), 0700) < 0 && errno != EEXIST)
      return make_failure(failure_kind::internal,
                          "corral's state dir: mkdir " + path + ": " + std::strerror(errno) +
                              (::geteuid() == 0 ? std::string()
                                                : "; set XDG_RUNTIME_DIR to a directory this user owns (corral "
                                                  "uses $XDG_RUNTIME_DIR/corral, else /tmp/corral-UID)"));
    struct stat st {};
    // Searchable by others (0711) is allowed above the scratch dirs: a root runtime's
    // contained tier runs its programs as nobody, who must reach their own scratch dir by
    // path (tiers/contained/contained_tier.cpp). Never listable, never writable.
    bool searchable_ok = sub != "/leases";
    if (::lstat(path.c_str(), &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        ((st.st_mode & 077) != 0 && !(searchable_ok && (st.st_mode & 077) == 011)))
      return make_failure(failure_kind::internal,
                          path + " must be a directory owned by uid " + std::to_string(::geteuid()) +
                              " with mode 0700 (another user could tamper with leases or scratch files)");
  }
  return dir;
}

} // namespace

std::string find_exec_helper() { return find_companion_program("corral-exec", CORRAL_INSTALLED_HELPER); }

struct runtime::impl {
  std::optional<instance_claim> claim;  // first member: released last, after every lease
  std::shared_ptr<const profile> prof;
  kernel_features features;
  std::shared_ptr<tier_registry> registry;
  std::string state_dir;
  std::unique_ptr<io_loop> io;
  std::unique_ptr<child_launcher> launcher;  // every child starts through it, on `io`
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor sup;
  caf::actor workspaces;
  std::string workspaces_dir;
  std::size_t max_concurrent = 0;
};

runtime::runtime(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

expected<std::unique_ptr<runtime>> runtime::start(runtime_options options) {
  // spdlog's stock default logger writes to stdout, which belongs to the host program (an
  // MCP server's stdout is its protocol): an embedder that set no logger gets stderr.
  if (auto current = spdlog::default_logger(); current && current->name().empty()) {
    auto level = current->level();
    auto logger = spdlog::get("corral") ? spdlog::get("corral") : spdlog::stderr_color_mt("corral");
    logger->set_level(level);
    spdlog::set_default_logger(logger);
  }
  auto p = std::make_unique<impl>();
  auto helper = options.exec_helper.empty() ? find_exec_helper() : options.exec_helper;
  if (helper.empty() || ::access(helper.c_str(), X_OK) != 0)
    return make_failure(failure_kind::internal,
                        "the exec helper corral-exec was not found (looked beside this program and at " CORRAL_INSTALLED_HELPER
                        "); reinstall corral or pass its path");
  auto dir = prepare_state_dir(options.state_dir);
  if (!dir) return dir.error();
  p->state_dir = *dir;
  // A crashed earlier run may have left cgroups with processes in them: kill and remove
  // them before anything new starts. A run whose state dir went too (a SIGKILLed daemon
  // with a temporary one) left cgroups no record names: those are removed once old and
  // empty, which no live lease is.
  p->features = detect_kernel_features();
  if (p->features.cgroup_delegated) {
    // The executions' cgroups go beside corral in its delegated cgroup, which may then hold
    // no process: corral moves into a leaf first. Refused, the tiers that need cgroups say
    // why (fail closed: nothing runs without the limits).
    if (auto moved = enter_runtime_leaf(p->features.cgroup_root, ::getpid()); !moved) {
      p->features.cgroup_version = 0;
      p->features.cgroup_root.clear();
      p->features.cgroup_delegated = false;
      p->features.cgroup_controllers.clear();
      p->features.cgroup_error = moved.error().message;
    }
  }
  sweep_options sweep;
  // Found once, like the features: each lease plans its cgroups from it without rereading
  // mountinfo. Without one, each lease says why.
  std::shared_ptr<const cgroup_layout> layout;
  if (auto found = find_cgroup_layout(p->features)) {
    sweep.orphan_parents = corral_parents(*found);
    layout = std::make_shared<const cgroup_layout>(std::move(*found));
  }
  auto claim = instance_claim::take(p->state_dir);
  if (!claim) return claim.error();
  p->claim.emplace(std::move(*claim));
  auto swept = sweep_leases(p->state_dir + "/leases", sweep);
  // After the leases: their processes, which might still use a scratch dir, are dead now.
  auto scratch = sweep_scratch(p->state_dir);
  if (swept.swept > 0 || swept.refused > 0 || swept.orphans_removed > 0 || scratch.removed > 0)
    spdlog::warn("swept {} lease(s) left by an earlier run ({} refused as outside cgroupfs), {} empty "
                 "cgroup(s) no record named and {} scratch dir(s) of runtimes that are gone",
                 swept.swept, swept.refused, swept.orphans_removed, scratch.removed);
  for (auto& e : scratch.errors) spdlog::warn("sweeping scratch dirs: {}", e);

  // The state dir holds lease records and scratch dirs, the workspaces dir every
  // workspace's files: a root holding either has it hidden. The workspaces dir is made at
  // the first create (a runtime that keeps none leaves nothing behind), so only one that
  // exists is checked and hidden now.
  p->workspaces_dir = options.workspaces_dir.empty() ? corral::workspaces_dir(options.prof.workspaces)
                                                     : options.workspaces_dir;
  std::vector<std::string> hidden{p->state_dir};
  if (std::filesystem::exists(p->workspaces_dir)) {
    if (auto ws_dir = prepare_workspaces_dir(p->workspaces_dir); !ws_dir) return ws_dir.error();
    hidden.push_back(p->workspaces_dir);
  }
  if (auto s = mask_protected(options.prof, hidden); !s) return s.error();
  p->prof = std::make_shared<const profile>(std::move(options.prof));
  p->registry = build_default_tiers(*p->prof, p->features, p->state_dir + "/preflight");

  p->io = std::make_unique<io_loop>();
  p->launcher = std::make_unique<child_launcher>(*p->io, helper);
  // Spawned now, it is ready by the first cold launch (after the cgroup leaf move above:
  // a delegated v2 dir with a process left in it could not hold the executions' cgroups).
  if (options.spare_helper != spare_helper_mode::none)
    p->io->keep_spare_helper(helper, options.spare_helper == spare_helper_mode::kept);
  p->cfg = std::make_unique<caf::actor_system_config>(make_config());
  if (options.configure_system) options.configure_system(*p->cfg);
  p->sys = std::make_unique<caf::actor_system>(*p->cfg);

  supervisor_config sc;
  sc.prof = p->prof;
  sc.tiers = p->registry;
  sc.policy = selection_policy_from_env(options.allow_host);
  sc.launcher = p->launcher.get();
  sc.scratch_parent = p->state_dir + "/scratch";
  sc.instance = p->claim->instance();
  if (const char* path = std::getenv("PATH")) sc.caller_path = path;
  sc.max_concurrent = options.max_concurrent;
  sc.warm_jails = options.warm_jails;
  sc.warm_demand_window = options.warm_demand_window;
  p->max_concurrent = options.max_concurrent;
  auto* sys = p->sys.get();
  auto* io = p->io.get();
  auto state_dir = p->state_dir;
  auto features = p->features;
  auto leases_dir = p->state_dir + "/leases";
  // A workspace's holder holds its budget in a cgroup lease of its own; its steps hold shares.
  holder_env holding;
  holding.launcher = p->launcher.get();
  holding.boundary = p->registry->find("landlock");
  holding.instance = sc.instance;
  holding.caller_path = sc.caller_path;
  holding.make_budget = [sys, features, layout, leases_dir](const std::string& id, const limits& budget) {
    cgroup_lease_config lc;
    lc.exec_id = id;
    lc.leases_dir = leases_dir;
    lc.lim = budget;
    lc.kill_grace = budget.kill_grace;
    lc.features = features;
    lc.layout = layout;
    lc.workspace = true;
    return spawn_cgroup_lease(*sys, lc);
  };
  p->workspaces = spawn_workspace_registry(*p->sys, {p->workspaces_dir, p->prof->workspaces, p->prof, std::move(holding)});
  sc.workspaces = p->workspaces;
  sc.make_lease = [sys, io, features, layout, leases_dir](const lease_request& r) -> caf::actor {
    if (r.workspace_holder) return spawn_workspace_share_lease(*sys, io, r.workspace_holder, r.effective.kill_grace);
    if (!r.boundary->needs_cgroup_lease())
      return sys->spawn(process_group_lease, io, r.effective.kill_grace);
    cgroup_lease_config lc;
    lc.exec_id = r.exec_id;
    lc.leases_dir = leases_dir;
    lc.lim = r.effective;
    lc.kill_grace = r.effective.kill_grace;
    lc.features = features;
    lc.layout = layout;
    lc.nested = r.boundary->nests_cgroups();
    return spawn_cgroup_lease(*sys, lc);
  };
  p->sup = spawn_supervisor(*p->sys, std::move(sc));
  return std::unique_ptr<runtime>(new runtime(std::move(p)));
}

void runtime::stop_actors() {
  if (!impl_->sup) return;
  {
    caf::scoped_actor self{*impl_->sys};
    self->request(impl_->sup, std::chrono::seconds(60), stop_atom::value)
        .receive([](bool) {}, [](caf::error&) {});
    self->send_exit(impl_->sup, caf::exit_reason::user_shutdown);
    // After the supervisor: its executions gave their workspaces back. The files stay.
    if (impl_->workspaces) self->send_exit(impl_->workspaces, caf::exit_reason::user_shutdown);
  }
  impl_->sup = caf::actor{};
  impl_->workspaces = caf::actor{};
}

void runtime::stop_before_exit() {
  stop_actors();
  impl_->claim.reset();  // every lease is gone: the state dir is free for the next runtime
}

runtime::~runtime() {
  if (!impl_) return;
  stop_actors();
  impl_->sys.reset();  // joins the scheduler: no actor touches the launcher or the loop after this
  impl_->launcher.reset();
  impl_->io.reset();
}

expected<exec_result> runtime::exec(const exec_request& request) {
  caf::scoped_actor self{*impl_->sys};
  expected<exec_result> out = make_failure(failure_kind::internal, "no reply from the supervisor");
  self->request(impl_->sup, caf::infinite, exec_atom::value, request)
      .receive(
          [&](exec_outcome& o) {
            if (o.ok) out = std::move(o.result);
            else out = std::move(o.error);
          },
          [&](caf::error& e) {
            out = make_failure(failure_kind::internal, "supervisor: " + impl_->sys->render(e));
          });
  return out;
}

namespace {

// One blocking call to the workspace registry, its reply turned into the caller's value.
// Archiving or unpacking a whole tree may take minutes; every other call is answered soon.
constexpr std::chrono::seconds kRegistryBound{30};
constexpr std::chrono::seconds kArchiveBound{600};

template <class Reply, class... Ts>
expected<Reply> ask_workspaces_within(caf::actor_system& sys, const caf::actor& registry, std::chrono::seconds bound,
                                      Ts&&... xs) {
  caf::scoped_actor self{sys};
  expected<Reply> out = make_failure(failure_kind::internal, "no reply from the workspace registry");
  self->request(registry, bound, std::forward<Ts>(xs)...)
      .receive([&](Reply& r) { out = std::move(r); },
               [&](caf::error& e) { out = make_failure(failure_kind::internal, "workspace registry: " + sys.render(e)); });
  return out;
}

template <class Reply, class... Ts>
expected<Reply> ask_workspaces(caf::actor_system& sys, const caf::actor& registry, Ts&&... xs) {
  return ask_workspaces_within<Reply>(sys, registry, kRegistryBound, std::forward<Ts>(xs)...);
}

expected<snapshot_record> snapshot_or_error(expected<snapshot_reply> r) {
  if (!r) return r.error();
  if (!r->ok) return r->error;
  return std::move(r->record);
}

// A reply that says it failed is the caller's failure.
template <class Reply>
expected<Reply> answered(expected<Reply> r) {
  if (r && !r->ok) return r->error;
  return r;
}

expected<workspace_info> info_or_error(expected<workspace_reply> r) {
  auto a = answered(std::move(r));
  if (!a) return a.error();
  return std::move(a->info);
}

} // namespace

expected<workspace_info> runtime::create_workspace(const workspace_options& options, const std::string& principal) {
  auto bound = options.from_snapshot.empty() ? kRegistryBound : kArchiveBound;
  return info_or_error(ask_workspaces_within<workspace_reply>(*impl_->sys, impl_->workspaces, bound, ws_create_atom::value,
                                                              options, principal));
}

expected<snapshot_record> runtime::snapshot_workspace(const std::string& ref, const std::string& principal) {
  return snapshot_or_error(ask_workspaces_within<snapshot_reply>(*impl_->sys, impl_->workspaces, kArchiveBound,
                                                                 ws_snap_atom::value, ref, principal));
}

std::vector<snapshot_record> runtime::list_snapshots(const std::string& principal) {
  auto list = ask_workspaces<snapshot_list>(*impl_->sys, impl_->workspaces, ws_snaps_atom::value, principal);
  return list ? std::move(list->items) : std::vector<snapshot_record>{};
}

expected<snapshot_record> runtime::inspect_snapshot(const std::string& id, const std::string& principal) {
  return snapshot_or_error(ask_workspaces<snapshot_reply>(*impl_->sys, impl_->workspaces, ws_snapget_atom::value, id, principal));
}

expected<snapshot_record> runtime::remove_snapshot(const std::string& id, const std::string& principal) {
  return snapshot_or_error(ask_workspaces<snapshot_reply>(*impl_->sys, impl_->workspaces, ws_snaprm_atom::value, id, principal));
}

std::vector<workspace_info> runtime::list_workspaces(const std::string& principal) {
  auto list = ask_workspaces<workspace_list>(*impl_->sys, impl_->workspaces, ws_list_atom::value, principal);
  return list ? std::move(list->items) : std::vector<workspace_info>{};
}

expected<workspace_info> runtime::inspect_workspace(const std::string& ref, const std::string& principal) {
  return info_or_error(ask_workspaces<workspace_reply>(*impl_->sys, impl_->workspaces, ws_get_atom::value, ref, principal));
}

expected<workspace_info> runtime::end_workspace(const std::string& ref, bool keep_files, const std::string& principal) {
  return info_or_error(
      ask_workspaces<workspace_reply>(*impl_->sys, impl_->workspaces, ws_end_atom::value, ref, principal, keep_files));
}

expected<workspace_info> runtime::pause_workspace(const std::string& ref, const std::string& principal) {
  return info_or_error(ask_workspaces<workspace_reply>(*impl_->sys, impl_->workspaces, ws_pause_atom::value, ref, principal));
}

expected<workspace_info> runtime::resume_workspace(const std::string& ref, const std::string& principal) {
  return info_or_error(ask_workspaces<workspace_reply>(*impl_->sys, impl_->workspaces, ws_resume_atom::value, ref, principal));
}

expected<std::vector<workspace_process>> runtime::workspace_processes(const std::string& ref, const std::string& principal) {
  auto r = answered(ask_workspaces<process_list>(*impl_->sys, impl_->workspaces, ws_ps_atom::value, ref, principal));
  if (!r) return r.error();
  return std::move(r->items);
}

expected<std::vector<terminal_listing>> runtime::workspace_terminals(const std::string& ref, const std::string& principal) {
  auto r = answered(ask_workspaces<terminal_list>(*impl_->sys, impl_->workspaces, ws_terms_atom::value, ref, principal));
  if (!r) return r.error();
  return std::move(r->items);
}

expected<session_handle> runtime::workspace_terminal(const std::string& ref, const std::string& terminal,
                                                     const std::string& principal) {
  auto r = answered(ask_workspaces<terminal_found>(*impl_->sys, impl_->workspaces, ws_term_atom::value, ref, principal, terminal));
  if (!r) return r.error();
  return session_handle{r->actor, r->number};
}

expected<workspace_info> runtime::signal_in_workspace(const std::string& ref, int pid, int signal,
                                                      const std::string& principal) {
  return info_or_error(
      ask_workspaces<workspace_reply>(*impl_->sys, impl_->workspaces, ws_kill_atom::value, ref, principal, pid, signal));
}

expected<file_reply> runtime::workspace_file(const std::string& ref, const file_call& call, const std::string& principal) {
  return answered(ask_workspaces<file_reply>(*impl_->sys, impl_->workspaces, ws_files_atom::value, ref, principal, call));
}

expected<changes_reply> runtime::mark_workspace(const std::string& ref, const std::string& label,
                                                const std::string& principal) {
  return answered(ask_workspaces<changes_reply>(*impl_->sys, impl_->workspaces, ws_mark_atom::value, ref, principal, label));
}

expected<changes_reply> runtime::workspace_changes(const std::string& ref, const std::string& since,
                                                   const std::string& principal) {
  return answered(ask_workspaces<changes_reply>(*impl_->sys, impl_->workspaces, ws_changes_atom::value, ref, principal, since));
}

caf::actor runtime::workspaces() const { return impl_->workspaces; }
const std::string& runtime::workspaces_dir() const { return impl_->workspaces_dir; }

void runtime::exec_async(const exec_request& request, std::function<void(expected<exec_result>)> done) {
  auto* sys = impl_->sys.get();
  // The request travels as a spawn argument: CAF 0.17 binds a null reference to the empty
  // argument tuple of an argument-less spawn (UBSan reports it), so never spawn without one.
  auto ask = [sup = impl_->sup, done = std::move(done), sys](caf::event_based_actor* self, exec_request req) {
    self->request(sup, caf::infinite, exec_atom::value, std::move(req))
        .then(
            [=](exec_outcome& o) {
              if (o.ok) done(std::move(o.result));
              else done(std::move(o.error));
            },
            [=](caf::error& e) { done(make_failure(failure_kind::internal, "supervisor: " + sys->render(e))); });
  };
  sys->spawn(ask, request);
}

namespace {

template <class Request>
expected<session_handle> open_any(caf::actor_system& sys, const caf::actor& sup, const Request& request,
                                  caf::actor owner) {
  caf::scoped_actor self{sys};
  expected<session_handle> out = make_failure(failure_kind::internal, "no reply from the supervisor");
  auto reply = [&](session_opened& o) {
    if (o.ok) out = session_handle{o.session, o.number};
    else out = std::move(o.error);
  };
  auto error = [&](caf::error& e) { out = make_failure(failure_kind::internal, "supervisor: " + sys.render(e)); };
  if constexpr (std::is_same_v<Request, session_request>)
    self->request(sup, std::chrono::seconds(30), session_atom::value, request, std::move(owner)).receive(reply, error);
  else
    self->request(sup, std::chrono::seconds(30), terminal_atom::value, request).receive(reply, error);
  return out;
}

} // namespace

expected<session_handle> runtime::open_session(const session_request& request, caf::actor owner) {
  if (!owner) return make_failure(failure_kind::invalid_request, "a session needs an owner actor");
  return open_any(*impl_->sys, impl_->sup, request, std::move(owner));
}

expected<session_handle> runtime::open_terminal(const terminal_request& request) {
  return open_any(*impl_->sys, impl_->sup, request, caf::actor{});
}

caf::actor_system& runtime::system() { return *impl_->sys; }
caf::actor runtime::supervisor() const { return impl_->sup; }
const kernel_features& runtime::features() const { return impl_->features; }
const tier_registry& runtime::tiers() const { return *impl_->registry; }
const profile& runtime::frozen_profile() const { return *impl_->prof; }
const std::string& runtime::state_dir() const { return impl_->state_dir; }
std::size_t runtime::max_concurrent() const { return impl_->max_concurrent; }
std::size_t runtime::tracked_processes() const { return impl_->io->tracked(); }

std::size_t runtime::warm_jails_ready() {
  caf::scoped_actor self{*impl_->sys};
  std::size_t ready = 0;
  self->request(impl_->sup, std::chrono::seconds(5), stats_atom::value)
      .receive([&](const supervisor_stats& s) { ready = s.warm_ready; }, [](caf::error&) {});
  return ready;
}

} // namespace corral
