#include "actors/supervisor.hpp"

#include <deque>
#include <type_traits>
#include <map>
#include <filesystem>
#include <set>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/execution_messages.hpp"
#include "actors/execution_planner.hpp"
#include "actors/execution_state.hpp"
#include "actors/fair_queue.hpp"
#include "actors/sessions/stdio_session.hpp"
#include "actors/sessions/terminal_session.hpp"
#include "actors/warm/warm_pool.hpp"
#include "actors/workspaces/workspace_files.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "config/tighten.hpp"
#include "tiers/state_dir/instance_claim.hpp"
#include "tiers/jail/scratch_dir.hpp"

namespace corral {

// One borrow of a workspace, to give back when its execution or session ends.
struct workspace_loan {
  std::string workspace;
  std::uint64_t loan = 0;
  bool left_running = false;  // its background processes stay in the workspace
};

struct supervisor_state {
  supervisor_config config;
  std::string instance;  // distinguishes this runtime's execution ids from another's
  std::uint64_t next_id = 1;
  std::set<caf::actor> running;
  // Sessions are long-lived: they do not count against max_concurrent, but stop ends them.
  std::set<caf::actor> sessions;
  std::uint64_t next_session = 1;
  struct waiting {
    execution_plan plan;
    caf::typed_response_promise<exec_outcome> reply;
  };
  fair_queue<waiting> queue;
  std::size_t completed = 0;
  bool stopping = false;
  std::vector<caf::typed_response_promise<bool>> stop_replies;
  caf::actor warm_pool;
  std::shared_ptr<const tier> warm_tier;
  // Running executions and sessions that borrowed a workspace: given back when they end.
  std::map<caf::actor_addr, workspace_loan> borrowed;
  bool warm_pool_stopped = true;
  std::size_t warm_ready = 0;  // as the pool last said
};

namespace {

// The registry answers from memory; only a wedged one takes longer.
constexpr std::chrono::seconds kWorkspaceBound{10};
// A scan hashes every file of a workspace (at most kMaxTreeEntries entries).
constexpr std::chrono::seconds kScanBound{120};

using self_ptr = caf::stateful_actor<supervisor_state>*;

// The checks every request passes before it is planned: the runtime still takes work, and
// the tier it names (or the profile's) exists and the policy allows it.
expected<planning_context> admit(self_ptr self, const std::string& tier) {
  auto& st = self->state;
  if (st.stopping) return make_failure(failure_kind::refused, "the runtime is stopping");
  const auto& prof = *st.config.prof;
  auto chosen = st.config.tiers->select(tier.empty() ? prof.tier : tier, st.config.policy);
  if (!chosen) return chosen.error();
  return planning_context{&prof, *chosen, st.config.scratch_parent, st.config.caller_path};
}

// Why nothing can run in a workspace here, if it cannot.
std::optional<failure> workspace_refusal(self_ptr self, const planning_context& ctx) {
  if (!self->state.config.workspaces) return make_failure(failure_kind::refused, "this runtime keeps no workspaces");
  if (ctx.boundary->name() != "landlock")
    return make_failure(failure_kind::refused, "workspaces run on the landlock tier only, not " + ctx.boundary->name() +
                                                   " (name no tier, or --tier landlock)");
  return std::nullopt;
}

// Borrows a workspace for an execution or a session: `then` gets the loan, or (ok false)
// why there is none: this runtime keeps none, the tier is not landlock, the registry
// refused or did not answer.
template <class Then>
void borrow(self_ptr self, const planning_context& ctx, const std::string& ref, const std::string& principal,
            running_item what, Then then) {
  if (auto refused = workspace_refusal(self, ctx)) {
    workspace_borrowed none;
    none.error = *refused;
    return then(none);
  }
  self->request(self->state.config.workspaces, kWorkspaceBound, ws_borrow_atom::value, ref, principal, std::move(what))
      .then([=](workspace_borrowed& lent) mutable { then(lent); },
            [=](caf::error& e) mutable {
              workspace_borrowed none;
              none.error = make_failure(failure_kind::internal, "the workspace registry did not answer: " + self->system().render(e));
              then(none);
            });
}

// A worker that scans or diffs the files of the workspace whose root is `root` (with its
// hash cache), on a thread of its own.
caf::actor tree_worker(self_ptr self, const std::string& root) {
  return spawn_file_worker(self->system(), workspace_layout_of_root(root));
}

// The registry may lend the workspace again: its execution ended, or never started.
void return_workspace(self_ptr self, const workspace_loan& lent) {
  self->send(self->state.config.workspaces, ws_return_atom::value, lent.workspace, lent.loan, lent.left_running);
}

workspace_loan loan_of(const workspace_borrowed& lent) { return {lent.id, lent.loan}; }

// An execution or session in a workspace has ended (or died); once, whichever hears it first.
void give_back(self_ptr self, const caf::actor_addr& exec) {
  auto& st = self->state;
  auto lent = st.borrowed.find(exec);
  if (lent == st.borrowed.end()) return;
  return_workspace(self, lent->second);
  st.borrowed.erase(lent);
}

// What a session runs, as the workspace's journal names it.
std::vector<std::string> session_argv(const session_request& r) { return r.argv; }
std::vector<std::string> session_argv(const terminal_request& r) { return terminal_program(r); }

// What an execution runs, as the journal names it: its argv, or its language and the start
// of its code.
std::vector<std::string> exec_argv(const exec_request& r) {
  if (r.language == "argv") return r.argv;
  constexpr std::size_t kCodeShown = 200;
  return {r.language, r.code.size() > kCodeShown ? r.code.substr(0, kCodeShown) + "…" : r.code};
}

session_opened not_opened(failure why) {
  session_opened o;
  o.error = std::move(why);
  return o;
}

// One path for both session kinds: numbered, planned and spawned by its kind (open_session
// in actors/sessions/), then monitored until it ends. `tag` sets the kinds' ids apart ("-s",
// "-t"); `owner` is the stdio session's only. In a workspace, `lent` is its borrow, given
// back when the session ends (or now, if it does not open).
template <class Request, class... Owner>
session_opened open_admitted(self_ptr self, const Request& request, planning_context ctx, const char* tag,
                             const workspace_borrowed* lent, Owner... owner) {
  auto& st = self->state;
  auto number = st.next_session++;
  ctx.workspace = lent;
  session_opening at{st.instance + tag + std::to_string(number), number, std::move(ctx),
                     session_env{st.config.launcher, st.config.make_lease}};
  auto session = open_session(self->system(), request, std::move(at), std::move(owner)...);
  if (!session) {
    if (lent) return_workspace(self, loan_of(*lent));
    return not_opened(session.error());
  }
  self->monitor(*session);
  st.sessions.insert(*session);
  if (lent) st.borrowed[session->address()] = loan_of(*lent);
  session_opened opened;
  opened.ok = true;
  opened.session = *session;
  opened.number = number;
  return opened;
}

// A terminal in a workspace with a holder is the workspace's from now on (not its
// caller's): the registry keeps it and it is no longer this supervisor's borrow. Without a
// holder (the allow-list network mode) it stays its caller's, as a stdio session does.
void keep_in_workspace(self_ptr self, session_opened& opened, const workspace_loan& lent, const terminal_request& r) {
  self->state.borrowed.erase(opened.session.address());
  opened.terminal = resident_terminal_id(opened.number);
  opened.workspace = lent.workspace;
  self->send(self->state.config.workspaces, ws_resident_atom::value, lent.workspace, lent.loan, opened.session,
             opened.number, terminal_program(r));
}

template <class Request, class... Owner>
caf::result<session_opened> open(self_ptr self, const Request& request, const char* tag, Owner... owner) {
  auto ctx = admit(self, request.tier);
  if (!ctx) return not_opened(ctx.error());
  if (request.workspace.empty()) return open_admitted(self, request, std::move(*ctx), tag, nullptr, std::move(owner)...);
  auto reply = self->make_response_promise<session_opened>();
  constexpr bool terminal = std::is_same_v<Request, terminal_request>;
  running_item what{terminal ? "terminal" : "session", session_argv(request), {}, 0, {}, 0};
  borrow(self, *ctx, request.workspace, request.principal, std::move(what), [=](workspace_borrowed& lent) mutable {
    if (!lent.ok) {
      reply.deliver(not_opened(lent.error));
      return;
    }
    auto opened = open_admitted(self, request, *ctx, tag, &lent, owner...);
    if constexpr (terminal)
      if (opened.ok && lent.holder) keep_in_workspace(self, opened, loan_of(lent), request);
    reply.deliver(std::move(opened));
  });
  return reply;
}

// exec_request::changes: what changed in the workspace while it ran, into its result; the
// workspace is still borrowed, so it cannot end under the scan.
template <class Then>
void list_changes(self_ptr self, const std::string& work_dir, std::shared_ptr<const std::vector<manifest_entry>> before,
                  exec_outcome outcome, Then then) {
  self->request(tree_worker(self, work_dir), kScanBound, ws_diff_atom::value, tree_manifest{true, {}, std::move(before)})
      .then(
          [=](changes_reply& c) mutable {
            execution_changes changes;
            if (c.ok) {
              changes.entries = std::move(c.changes);
              changes.truncated = c.truncated;
            } else {
              changes.error = c.error.describe();
            }
            outcome.result.changes = std::move(changes);
            then(std::move(outcome));
          },
          [=](caf::error& e) mutable {
            outcome.result.changes = execution_changes{{}, false, "the scan after did not finish: " + self->system().render(e)};
            then(std::move(outcome));
          });
}

void launch(self_ptr self, execution_plan plan, caf::typed_response_promise<exec_outcome> reply) {
  auto& st = self->state;
  execution_env env{st.config.launcher, st.config.make_lease, st.warm_pool, st.warm_tier};
  workspace_loan lent{plan.workspace, plan.workspace_loan, plan.leave_running};
  auto before = plan.changes_before;
  auto work_dir = plan.work_dir;
  auto exec = self->spawn(execution, std::move(plan), std::move(env));
  self->monitor(exec);
  st.running.insert(exec);
  if (lent.workspace.empty()) {
    reply.delegate(exec, run_atom::value);
    return;
  }
  // The workspace is given back before the caller hears the result, so its next call
  // (another execution, or ending it) finds it free.
  st.borrowed[exec.address()] = lent;
  auto addr = exec.address();
  self->request(exec, caf::infinite, run_atom::value)
      .then(
          [=](exec_outcome& outcome) mutable {
            auto answer = [=](exec_outcome done) mutable {
              give_back(self, addr);
              reply.deliver(std::move(done));
            };
            if (before && outcome.ok) return list_changes(self, work_dir, before, std::move(outcome), answer);
            answer(std::move(outcome));
          },
          [=](caf::error& e) mutable {
            give_back(self, addr);
            reply.deliver(exec_outcome{false, make_failure(failure_kind::internal, "execution: " + self->system().render(e)), {}});
          });
}

// Plans the request and runs it now, or queues it when every slot is taken; a refusal
// (bad request, the client's queue full) is returned for the caller to answer.
std::optional<failure> plan_and_start(self_ptr self, const exec_request& request, const planning_context& ctx,
                                      caf::typed_response_promise<exec_outcome> reply,
                                      std::shared_ptr<const std::vector<manifest_entry>> changes_before = nullptr) {
  auto& st = self->state;
  bool must_wait = st.running.size() >= st.config.max_concurrent;
  auto client = request.client;
  if (must_wait && client != 0 && st.queue.queued(client) >= st.config.max_queued_per_client)
    return make_failure(failure_kind::limit_exceeded,
                        "this client already has " + std::to_string(st.queue.queued(client)) +
                            " executions waiting for a slot (the limit); wait for some to finish");
  auto id = st.instance + "-" + std::to_string(st.next_id++);
  auto plan = plan_execution(request, id, ctx);
  if (!plan) return plan.error();
  plan->changes_before = std::move(changes_before);
  if (!must_wait) {
    launch(self, std::move(*plan), reply);
  } else {
    auto subscriber = plan->live_output;
    auto position = st.queue.push(client, {std::move(*plan), reply});
    if (subscriber) self->send(subscriber, execution_queued{position, st.queue.queued(client)});
  }
  return std::nullopt;
}

// An execution in a workspace: the registry lends its files (or says why not), then it is
// planned and admitted like any other; the supervisor gives the workspace back at its end.
void borrow_workspace(self_ptr self, exec_request request, planning_context ctx,
                      caf::typed_response_promise<exec_outcome> reply) {
  auto refuse = [reply](failure f) mutable { reply.deliver(exec_outcome{false, std::move(f), {}}); };
  auto ref = request.workspace;
  auto principal = request.principal;
  running_item what{"exec", exec_argv(request), {}, 0, {}, 0};
  borrow(self, ctx, ref, principal, std::move(what), [=](workspace_borrowed& lent) mutable {
    if (!lent.ok) return refuse(lent.error);
    auto start = [=](std::shared_ptr<const std::vector<manifest_entry>> before) mutable {
      auto in_workspace = ctx;
      in_workspace.workspace = &lent;
      if (auto refused = plan_and_start(self, request, in_workspace, reply, std::move(before))) {
        return_workspace(self, loan_of(lent));
        refuse(*refused);
      }
    };
    if (!request.changes) return start(nullptr);
    // The files as they are before it starts, for the list of what it changed.
    self->request(tree_worker(self, lent.root), kScanBound, ws_scan_atom::value)
        .then(
            [=](tree_manifest& m) mutable {
              if (!m.ok) {
                return_workspace(self, loan_of(lent));
                return refuse(m.error);
              }
              start(m.entries);
            },
            [=](caf::error& e) mutable {
              return_workspace(self, loan_of(lent));
              refuse(make_failure(failure_kind::internal, "the workspace scan before it did not finish: " +
                                                              self->system().render(e)));
            });
  });
}

void admit_waiting(self_ptr self) {
  auto& st = self->state;
  while (!st.queue.empty() && st.running.size() < st.config.max_concurrent) {
    auto next = st.queue.pop();
    launch(self, std::move(next.plan), std::move(next.reply));
  }
}

void answer_stop_if_idle(self_ptr self) {
  auto& st = self->state;
  if (!st.stopping || !st.running.empty() || !st.sessions.empty() || !st.warm_pool_stopped) return;
  for (auto& rp : st.stop_replies) rp.deliver(true);
  st.stop_replies.clear();
}

// A pool for the profile's own tier, when it can arm jails ahead and is available: other
// tiers, and requests naming another tier, always start cold.
void start_warm_pool(self_ptr self) {
  auto& st = self->state;
  if (st.config.warm_jails == 0) return;
  auto chosen = st.config.tiers->select(st.config.prof->tier, st.config.policy);
  if (!chosen || !(*chosen)->supports_warm_jails() || !(*chosen)->available().available) return;
  auto defaults = tighten(*st.config.prof, limit_request{});
  if (!defaults) return;
  warm_pool_config wc;
  wc.launcher = st.config.launcher;
  wc.boundary = *chosen;
  wc.defaults = *defaults;
  wc.scratch_parent = st.config.scratch_parent;
  wc.caller_path = st.config.caller_path;
  wc.instance = st.instance;
  wc.size = st.config.warm_jails;
  wc.demand_window = st.config.warm_demand_window;
  wc.make_lease = st.config.make_lease;
  st.warm_tier = *chosen;
  wc.owner = self;
  st.warm_pool = spawn_warm_pool(self->system(), std::move(wc));
  // Monitored, not linked: a pool that fails only means cold starts.
  self->monitor(st.warm_pool);
  st.warm_pool_stopped = false;
}

} // namespace

caf::behavior supervisor(self_ptr self, supervisor_config config) {
  self->state.config = std::move(config);
  self->state.instance = self->state.config.instance.empty() ? random_instance_name() : self->state.config.instance;
  start_warm_pool(self);
  self->set_down_handler([=](caf::down_msg& down) {
    auto& st = self->state;
    if (st.warm_pool && down.source == st.warm_pool.address()) {
      st.warm_pool = caf::actor{};
      st.warm_tier.reset();
      st.warm_pool_stopped = true;
      return answer_stop_if_idle(self);
    }
    auto it = std::find_if(st.running.begin(), st.running.end(),
                           [&](const caf::actor& a) { return a.address() == down.source; });
    if (it == st.running.end()) {
      auto sit = std::find_if(st.sessions.begin(), st.sessions.end(),
                              [&](const caf::actor& a) { return a.address() == down.source; });
      if (sit != st.sessions.end()) st.sessions.erase(sit);
      give_back(self, down.source);  // a session in a workspace
      return answer_stop_if_idle(self);
    }
    st.running.erase(it);
    give_back(self, down.source);
    ++st.completed;
    admit_waiting(self);
    answer_stop_if_idle(self);
  });
  return {
      [=](exec_atom, exec_request& request) -> caf::result<exec_outcome> {
        auto ctx = admit(self, request.tier);
        if (!ctx) return exec_outcome{false, ctx.error(), {}};
        auto reply = self->make_response_promise<exec_outcome>();
        if (request.workspace.empty()) {
          // Once a promise is made, only it may answer: a returned value would be dropped.
          if (auto refused = plan_and_start(self, request, *ctx, reply)) reply.deliver(exec_outcome{false, *refused, {}});
          return reply;
        }
        borrow_workspace(self, std::move(request), std::move(*ctx), reply);
        return reply;
      },
      [=](session_atom, session_request& request, caf::actor& owner) -> caf::result<session_opened> {
        return open(self, request, "-s", std::move(owner));
      },
      [=](terminal_atom, terminal_request& request) -> caf::result<session_opened> { return open(self, request, "-t"); },
      [=](warm_atom, std::size_t ready) { self->state.warm_ready = ready; },
      [=](stats_atom) {
        auto& st = self->state;
        return supervisor_stats{st.running.size(), st.queue.size(), st.completed, st.warm_ready};
      },
      [=](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.stopping = true;
        st.queue.drain([=](supervisor_state::waiting& w) {
          remove_owned_scratch(w.plan);
          if (!w.plan.workspace.empty()) return_workspace(self, {w.plan.workspace, w.plan.workspace_loan});
          w.reply.deliver(exec_outcome{false, make_failure(failure_kind::refused, "the runtime is stopping"), {}});
        });
        for (auto& exec : st.running) self->send(exec, cancel_atom::value);
        for (auto& session : st.sessions) self->send(session, cancel_atom::value);
        if (st.warm_pool && !st.warm_pool_stopped) {
          auto done = [=] {
            self->state.warm_pool_stopped = true;
            answer_stop_if_idle(self);
          };
          self->request(st.warm_pool, std::chrono::seconds(30), stop_atom::value)
              .then([=](bool) { done(); }, [=](caf::error&) { done(); });
        }
        if (st.running.empty() && st.sessions.empty() && st.warm_pool_stopped) return true;
        st.stop_replies.push_back(self->make_response_promise<bool>());
        return st.stop_replies.back();
      },
  };
}

caf::actor spawn_supervisor(caf::actor_system& system, supervisor_config config) {
  return system.spawn(supervisor, std::move(config));
}

} // namespace corral
