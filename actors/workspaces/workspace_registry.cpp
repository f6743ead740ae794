#include "actors/workspaces/workspace_registry.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/atoms.hpp"
#include "actors/leases/lease_messages.hpp"
#include "actors/workspaces/registry_state.hpp"
#include "actors/workspaces/workspace_files.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "actors/workspaces/workspace_snapshots.hpp"
#include "config/root_layout.hpp"
#include "config/tighten.hpp"

namespace corral {

using namespace registry;

namespace {

namespace fs = std::filesystem;

// How often idle and lifetime deadlines are looked at: a deadline is met within this.
constexpr std::chrono::milliseconds kTickMax{1000};

// The blocking work on its own thread; its answer goes straight to the caller.
template <class Reply, class... Ts>
caf::result<Reply> on_worker(self_ptr self, workspace_entry& e, Ts&&... xs) {
  touch(e);
  auto rp = self->make_response_promise<Reply>();
  rp.delegate(spawn_file_worker(self->system(), paths_of(e)), std::forward<Ts>(xs)...);
  return rp;
}

// The files go unless the record says keep them; then the record stays, marked ended, and
// the next runtime leaves the directory alone.
void remove_workspace(workspace_entry& e, bool keep_files) {
  e.record.ended = true;
  if (keep_files || e.record.keep_files) {
    e.record.keep_files = true;
    // Ended on purpose: nothing in it is lost, whatever ran.
    if (auto s = clear_running(e.dir); !s) spdlog::warn("workspace {}: {}", e.record.id, s.error().message);
    if (auto s = write_record(e.dir, e.record); !s) spdlog::warn("workspace {}: {}", e.record.id, s.error().message);
    return;
  }
  std::error_code ec;
  fs::remove_all(e.dir, ec);
  if (ec) spdlog::warn("workspace {}: removing {}: {}", e.record.id, e.dir, ec.message());
}

// Killing everything in a workspace (its holder's lease) takes at most this long.
constexpr std::chrono::seconds kHolderStopBound{30};

// Ends a workspace: it leaves the index at once (its name is free again), then its holder
// kills everything inside, then its files go (or stay, marked ended). `done` runs last.
void end_entry(self_ptr self, const std::string& id, bool keep_files, const char* why,
               std::function<void()> done = {}) {
  auto it = self->state.entries.find(id);
  if (it == self->state.entries.end()) {
    if (done) done();
    return;
  }
  spdlog::info("workspace {} ended ({}){}", id, why, keep_files || it->second.record.keep_files ? ", files kept" : "");
  end_terminals(self, it->second);
  auto entry = std::move(it->second);
  self->state.entries.erase(it);
  if (!entry.holder) {
    remove_workspace(entry, keep_files);
    if (done) done();
    return;
  }
  auto holder = entry.holder;
  self->unlink_from(holder);
  auto finish = [entry, keep_files, done](bool) mutable {
    remove_workspace(entry, keep_files);
    if (done) done();
  };
  self->request(holder, kHolderStopBound, stop_atom::value)
      .then([finish](bool stopped) mutable { finish(stopped); }, [finish](caf::error&) mutable { finish(false); });
}

// What the workspace's cgroup holds for everything in it: its own memory, pids and cpu
// (narrowed from the profile's at create), the profile's for the rest (its /tmp's size).
limits workspace_budget(const profile& prof, const workspace_record& r) {
  limits budget = prof.limit;
  budget.memory_bytes = r.memory_bytes;
  budget.pids = r.pids;
  budget.cpu_cores = r.cpu_cores;
  return budget;
}

// The workspace's holder, spawned at its first step (not at create: a workspace used only
// through its files never builds a jail).
caf::actor holder_of(self_ptr self, workspace_entry& e) {
  if (!e.holds) return {};
  if (!e.holder) {
    holder_config hc;
    hc.env = self->state.config.holding;
    hc.workspace = e.record.id;
    hc.root = paths_of(e).root;
    hc.home = e.record.home;
    hc.budget = workspace_budget(*self->state.config.prof, e.record);
    e.holder = spawn_workspace_holder(self->system(), std::move(hc));
    self->link_to(e.holder);
  }
  return e.holder;
}

} // namespace

expected<std::string> prepare_workspaces_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_failure(failure_kind::config_error, "making the workspaces directory " + dir + ": " + ec.message());
  struct stat st {};
  if (::lstat(dir.c_str(), &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return make_failure(failure_kind::config_error, dir + " must be a directory owned by uid " + std::to_string(::geteuid()) +
                                                       " ([sandbox.workspaces] dir)");
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) < 0)
    return make_failure(failure_kind::config_error, "chmod 0700 " + dir + ": " + std::strerror(errno));
  return dir;
}

namespace {

// What an earlier runtime left: live workspaces are served again, ended ones kept for
// their owner stay untouched, unfinished creates go, anything unreadable is named in the
// log and left alone.
void adopt(registry_state& st) {
  std::error_code ec;
  std::size_t adopted = 0;
  for (auto& item : fs::directory_iterator(st.config.dir, ec)) {
    auto name = item.path().filename().string();
    if (!valid_workspace_id(name) || !item.is_directory()) continue;
    // The record is written last (after the files of a restore are unpacked): a directory
    // without one is a create the runtime stopped in, never handed out. It goes.
    std::error_code missing;
    if (!fs::exists(item.path() / "record.json", missing) && !missing) {
      std::error_code rm;
      fs::remove_all(item.path(), rm);
      spdlog::info("workspace {}: removed, its create never finished", name);
      continue;
    }
    auto record = read_record(item.path());
    if (!record) {
      spdlog::warn("workspace {}: not adopted: {}", name, record.error().message);
      continue;
    }
    if (record->ended || record->id != name) continue;
    workspace_entry e;
    e.record = std::move(*record);
    e.dir = item.path();
    e.holds = holders_enabled(st);
    if (e.record.paused) e.phase = workspace_phase::paused;  // nothing is frozen now: resume frees it
    note_lost(e);
    st.entries.emplace(name, std::move(e));
    ++adopted;
  }
  if (adopted > 0) spdlog::info("adopted {} workspace(s) from {}", adopted, st.config.dir);
}

std::size_t owned_by(const registry_state& st, const std::string& principal) {
  return static_cast<std::size_t>(
      std::count_if(st.entries.begin(), st.entries.end(), [&](auto& kv) { return kv.second.record.owner == principal; }));
}

// The operator's setting, or a shorter one asked for; a longer one is refused, naming it.
expected<std::int64_t> narrowed(const char* what, std::chrono::milliseconds setting,
                                std::optional<std::chrono::milliseconds> asked) {
  if (!asked) return setting.count();
  if (asked->count() <= 0) return make_failure(failure_kind::invalid_request, std::string(what) + " must be positive");
  if (*asked > setting)
    return make_failure(failure_kind::refused, std::string(what) + " of " + std::to_string(asked->count()) +
                                                   " ms is more than [sandbox.workspaces] allows (" +
                                                   std::to_string(setting.count()) + " ms)");
  return asked->count();
}

// Whether `home` may be a workspace's second place inside: where a root could go, clear of
// the profile's roots, and only with a holder (whose view is where it appears).
std::optional<failure> home_problem(const registry_state& st, const std::string& home, std::string& normalized) {
  if (!holders_enabled(st))
    return make_failure(failure_kind::refused, "a workspace home (" + home +
                                                   ") needs the workspace's holder, which the allowlist network mode "
                                                   "does not have; use network = \"none\" or \"host\"");
  if (auto why = inside_path_problem(home, normalized))
    return make_failure(failure_kind::invalid_request, "workspace home " + home + ": " + *why);
  for (auto* list : {&st.config.prof->source_roots, &st.config.prof->output_roots})
    for (auto& r : *list) {
      auto& v = r.virtual_path;
      bool overlaps = v == normalized || v.rfind(normalized + "/", 0) == 0 || normalized.rfind(v + "/", 0) == 0;
      if (overlaps)
        return make_failure(failure_kind::invalid_request,
                            "workspace home " + normalized + " overlaps the profile's root at " + v);
    }
  return std::nullopt;
}

caf::result<workspace_reply> create(self_ptr self, const workspace_options& o, const std::string& principal) {
  auto& st = self->state;
  auto refuse = [](failure f) { return workspace_reply{false, std::move(f), {}}; };
  if (st.stopped) return refuse(make_failure(failure_kind::refused, "the runtime is stopping"));
  if (!o.name.empty() && !valid_workspace_name(o.name))
    return refuse(make_failure(failure_kind::invalid_request,
                               "workspace name '" + o.name + "' is not valid: 1 to 63 of a-z 0-9 . _ -, starting with a "
                               "letter or digit, and not shaped like an id (w- and 12 hex digits)"));
  if (!o.name.empty() && find(st, o.name, principal))
    return refuse(make_failure(failure_kind::invalid_request, "a workspace named '" + o.name + "' exists already"));
  if (auto dir = prepare_workspaces_dir(st.config.dir); !dir) return refuse(dir.error());
  const auto& set = st.config.settings;
  if (owned_by(st, principal) >= set.max_per_owner)
    return refuse(make_failure(failure_kind::limit_exceeded, "at most " + std::to_string(set.max_per_owner) +
                                                                 " workspaces per owner ([sandbox.workspaces] max_per_owner)"));
  if (st.entries.size() >= set.max_total)
    return refuse(make_failure(failure_kind::limit_exceeded, "at most " + std::to_string(set.max_total) +
                                                                 " workspaces at once ([sandbox.workspaces] max_total)"));
  std::string home;
  if (!o.home.empty())
    if (auto why = home_problem(st, o.home, home)) return refuse(*why);
  auto idle = narrowed("idle_timeout", set.idle_timeout, o.idle_timeout);
  if (!idle) return refuse(idle.error());
  auto life = narrowed("lifetime", set.max_lifetime, o.lifetime);
  if (!life) return refuse(life.error());
  // The same narrowing as a request's: floors, on_widen, and the key to raise in the message.
  limit_request asked;
  asked.memory_bytes = o.memory_bytes;
  asked.pids = o.pids;
  asked.cpu_cores = o.cpu_cores;
  auto effective = tighten(*st.config.prof, asked);
  if (!effective) return refuse(effective.error());
  if (!o.from_snapshot.empty())
    if (auto snap = find_snapshot(st.snapshots_dir, o.from_snapshot, principal); !snap) return refuse(snap.error());

  workspace_record r;
  do r.id = new_workspace_id();
  while (st.entries.count(r.id));
  r.name = o.name;
  r.owner = principal;
  r.created_at = unix_now();
  r.ends_at = r.created_at + std::max<std::int64_t>(1, *life / 1000);
  r.idle_timeout_ms = *idle;
  r.memory_bytes = effective->memory_bytes;
  r.pids = effective->pids;
  r.cpu_cores = effective->cpu_cores;
  r.keep_files = o.keep_files;
  r.from_snapshot = o.from_snapshot;
  r.home = home;

  workspace_entry e;
  e.record = r;
  e.dir = st.config.dir + "/" + r.id;
  e.holds = holders_enabled(st);
  // The files' directory is the execution's /work: the tier makes it the jail user's.
  for (auto& d : {e.dir, paths_of(e).root})
    if (::mkdir(d.c_str(), 0700) < 0) {
      int err = errno;
      std::error_code ec;
      fs::remove_all(e.dir, ec);
      return refuse(make_failure(failure_kind::internal, "mkdir " + d + ": " + std::strerror(err)));
    }
  if (!r.from_snapshot.empty()) return restore_into(self, std::move(e));
  // The mark "changes" compare against by default: the empty tree it starts as.
  auto creation = set_mark(paths_of(e), "creation");
  auto written = creation.ok ? write_record(e.dir, r) : status(creation.error);
  if (!written) {
    std::error_code ec;
    fs::remove_all(e.dir, ec);
    return refuse(written.error());
  }
  spdlog::info("workspace {} created{} for {}", r.id, r.name.empty() ? "" : " as " + r.name, principal);
  auto [it, inserted] = st.entries.emplace(r.id, std::move(e));
  return workspace_reply{true, {}, info_of(it->second)};
}

// Ends what is idle past its timeout or past its lifetime; a workspace in use ends when its
// last execution returns it (and lends itself to no new one meanwhile).
void expire(self_ptr self) {
  auto& st = self->state;
  auto now = clock::now();
  auto wall = unix_now();
  std::vector<std::pair<std::string, const char*>> ending;
  for (auto& [id, e] : st.entries) {
    bool paused = e.phase == workspace_phase::paused;
    if (!e.loans.empty() || (e.phase != workspace_phase::ready && !paused)) continue;
    if (wall >= e.record.ends_at) ending.emplace_back(id, "its lifetime is over");
    // A paused workspace's idle clock stands still, as does a watched terminal's; its
    // lifetime does not.
    else if (!paused && !watched(e) && now - e.last_used >= std::chrono::milliseconds(e.record.idle_timeout_ms))
      ending.emplace_back(id, "idle");
  }
  for (auto& [id, why] : ending) end_entry(self, id, false, why);
}

std::chrono::milliseconds tick_interval(const registry_state& st) {
  // A quarter of the shortest idle timeout, at most a second: deadlines are met to within it.
  auto tick = kTickMax;
  for (auto& [id, e] : st.entries)
    tick = std::min(tick, std::chrono::milliseconds(std::max<std::int64_t>(10, e.record.idle_timeout_ms / 4)));
  return tick;
}

// Pause freezes everything running in the workspace (its holder's cgroup) and lends it to
// nothing until resumed; an execution or session running in it now is a caller waiting,
// so a pause then is refused rather than freezing the caller's call.
caf::result<workspace_reply> pause(self_ptr self, const std::string& ref, const std::string& principal, bool pausing) {
  auto* e = find(self->state, ref, principal);
  if (!e) return workspace_reply{false, no_such(ref), {}};
  auto wanted_from = pausing ? workspace_phase::ready : workspace_phase::paused;
  if (e->phase != wanted_from) {
    if (e->phase == (pausing ? workspace_phase::paused : workspace_phase::ready))
      return workspace_reply{true, {}, info_of(*e)};  // already so
    return workspace_reply{false, not_ready(*e), {}};
  }
  if (pausing && !e->loans.empty())
    return workspace_reply{false,
                           make_failure(failure_kind::conflict, "workspace " + e->record.id + " has " +
                                                                    std::to_string(e->loans.size()) +
                                                                    " execution(s) or session(s) running; pause it when they "
                                                                    "are done (or cancel them)"),
                           {}};
  auto id = e->record.id;
  auto settle = [self, id, pausing](workspace_entry& entry) -> workspace_reply {
    entry.phase = pausing ? workspace_phase::paused : workspace_phase::ready;
    entry.record.paused = pausing;
    touch(entry);
    if (auto written = write_record(entry.dir, entry.record); !written)
      spdlog::warn("workspace {}: {}", id, written.error().message);
    spdlog::info("workspace {} {}", id, pausing ? "paused" : "resumed");
    return workspace_reply{true, {}, info_of(entry)};
  };
  if (!e->holder) return settle(*e);
  auto rp = self->make_response_promise<workspace_reply>();
  self->request(e->holder, kHolderStopBound, freeze_atom::value, pausing)
      .then(
          [=](lease_done& done) mutable {
            auto it = self->state.entries.find(id);
            if (it == self->state.entries.end()) rp.deliver(workspace_reply{false, no_such(id), {}});
            else if (!done.ok) rp.deliver(workspace_reply{false, done.error, {}});
            else rp.deliver(settle(it->second));
          },
          [=](caf::error& err) mutable {
            rp.deliver(workspace_reply{false, make_failure(failure_kind::internal, self->system().render(err)), {}});
          });
  return rp;
}

} // namespace

caf::actor spawn_workspace_registry(caf::actor_system& system, workspace_registry_config config) {
  // The config goes in as a spawn argument, not a capture (see spawn_file_worker).
  return system.spawn([](caf::stateful_actor<registry_state>* self, workspace_registry_config config) -> caf::behavior {
    auto& st = self->state;
    st.config = std::move(config);
    st.snapshots_dir = st.config.dir + "/snapshots";
    sweep_partial_snapshots(st.snapshots_dir);
    adopt(st);
    expire(self);
    self->delayed_send(self, tick_interval(st), ws_tick_atom::value);
    // Only terminals are monitored (holders are linked).
    self->set_down_handler([=](caf::down_msg& down) { forget_terminal(self->state, down.source); });
    return {
        [=](ws_create_atom, workspace_options& o, std::string& principal) { return create(self, o, principal); },
        [=](ws_list_atom, std::string& principal) {
          workspace_list out;
          for (auto& [id, e] : self->state.entries)
            if (e.record.owner == principal) out.items.push_back(info_of(e));
          return out;
        },
        [=](ws_get_atom, std::string& ref, std::string& principal) -> workspace_reply {
          auto* e = find(self->state, ref, principal);
          if (!e) return {false, no_such(ref), {}};
          return {true, {}, info_of(*e)};
        },
        [=](ws_end_atom, std::string& ref, std::string& principal, bool keep_files) -> caf::result<workspace_reply> {
          auto* e = find(self->state, ref, principal);
          if (!e) return workspace_reply{false, no_such(ref), {}};
          if (e->phase != workspace_phase::ready && e->phase != workspace_phase::paused)
            return workspace_reply{false, not_ready(*e), {}};
          if (!e->loans.empty())
            return workspace_reply{false,
                                   make_failure(failure_kind::refused, "workspace " + e->record.id + " has " +
                                                                           std::to_string(e->loans.size()) +
                                                                           " execution(s) running; end them (cancel) first"),
                                   {}};
          auto info = info_of(*e);
          info.record.ended = true;
          auto rp = self->make_response_promise<workspace_reply>();
          end_entry(self, e->record.id, keep_files, "asked", [rp, info]() mutable { rp.deliver(workspace_reply{true, {}, info}); });
          return rp;
        },
        [=](ws_pause_atom, std::string& ref, std::string& principal) { return pause(self, ref, principal, true); },
        [=](ws_resume_atom, std::string& ref, std::string& principal) { return pause(self, ref, principal, false); },
        [=](ws_ps_atom, std::string& ref, std::string& principal) -> caf::result<process_list> {
          auto* e = find(self->state, ref, principal);
          if (!e) return process_list{false, no_such(ref), {}};
          if (!e->holder) return process_list{true, {}, {}};
          auto rp = self->make_response_promise<process_list>();
          list_processes(self, e->record.id, [rp](process_list listed) mutable { rp.deliver(std::move(listed)); });
          return rp;
        },
        [=](ws_kill_atom, std::string& ref, std::string& principal, int pid, int sig) -> caf::result<workspace_reply> {
          auto* e = find(self->state, ref, principal);
          if (!e) return workspace_reply{false, no_such(ref), {}};
          if (sig <= 0 || sig >= 65)
            return workspace_reply{false, make_failure(failure_kind::invalid_request, "signal " + std::to_string(sig) +
                                                                                         " is not a signal"), {}};
          if (!e->holder)
            return workspace_reply{false, make_failure(failure_kind::not_found, "no process " + std::to_string(pid) +
                                                                                   " in the workspace"), {}};
          touch(*e);
          auto rp = self->make_response_promise<workspace_reply>();
          auto id = e->record.id;
          self->request(e->holder, kHolderStopBound, signal_atom::value, pid, sig)
              .then(
                  [=](lease_done& done) mutable {
                    auto it = self->state.entries.find(id);
                    if (!done.ok) rp.deliver(workspace_reply{false, done.error, {}});
                    else if (it == self->state.entries.end()) rp.deliver(workspace_reply{false, no_such(id), {}});
                    else rp.deliver(workspace_reply{true, {}, info_of(it->second)});
                    if (done.ok) refresh_background(self, id);
                  },
                  [=](caf::error& err) mutable {
                    rp.deliver(workspace_reply{false, make_failure(failure_kind::internal, self->system().render(err)), {}});
                  });
          return rp;
        },
        [=](ws_borrow_atom, std::string& ref, std::string& principal, running_item& what) -> workspace_borrowed {
          auto& s = self->state;
          workspace_borrowed out;
          auto* e = find(s, ref, principal);
          if (s.stopped) out.error = make_failure(failure_kind::refused, "the runtime is stopping");
          else if (!e) out.error = no_such(ref);
          else if (e->phase != workspace_phase::ready) out.error = not_ready(*e);
          else if (unix_now() >= e->record.ends_at)
            out.error = make_failure(failure_kind::refused, "workspace " + e->record.id + "'s lifetime is over");
          if (!out.error.message.empty()) return out;
          touch(*e);
          out.ok = true;
          out.id = e->record.id;
          out.loan = lend(s, *e, std::move(what));
          out.root = paths_of(*e).root;
          out.record = e->record;
          out.holder = holder_of(self, *e);
          return out;
        },
        [=](ws_return_atom, std::string& id, std::uint64_t loan, bool left_running) {
          auto it = self->state.entries.find(id);
          if (it == self->state.entries.end()) return;
          take_back(it->second, loan);
          touch(it->second);
          if (left_running) refresh_background(self, id);
        },
        [=](ws_files_atom, std::string& ref, std::string& principal, file_call& call) -> caf::result<file_reply> {
          auto* e = find(self->state, ref, principal);
          if (!e) return file_reply{false, no_such(ref), {}, {}, {}};
          if (e->phase == workspace_phase::restoring || (e->phase != workspace_phase::ready && !reads_only(call)))
            return file_reply{false, not_ready(*e), {}, {}, {}};
          return on_worker<file_reply>(self, *e, ws_files_atom::value, std::move(call));
        },
        [=](ws_mark_atom, std::string& ref, std::string& principal, std::string& label) -> caf::result<changes_reply> {
          auto* e = find(self->state, ref, principal);
          if (!e) return changes_reply{false, no_such(ref), {}, {}, false, 0};
          if (e->phase == workspace_phase::restoring) return changes_reply{false, not_ready(*e), {}, {}, false, 0};
          return on_worker<changes_reply>(self, *e, ws_mark_atom::value, std::move(label));
        },
        [=](ws_changes_atom, std::string& ref, std::string& principal, std::string& since) -> caf::result<changes_reply> {
          auto* e = find(self->state, ref, principal);
          if (!e) return changes_reply{false, no_such(ref), {}, {}, false, 0};
          if (e->phase == workspace_phase::restoring) return changes_reply{false, not_ready(*e), {}, {}, false, 0};
          return on_worker<changes_reply>(self, *e, ws_changes_atom::value, std::move(since));
        },
        [=](ws_resident_atom, std::string& id, std::uint64_t loan, caf::actor& terminal, std::uint64_t number,
            std::vector<std::string>& argv) { keep_terminal(self, id, loan, std::move(terminal), number, std::move(argv)); },
        [=](ws_terms_atom, std::string& ref, std::string& principal) { return terminals_of(self->state, ref, principal); },
        [=](ws_term_atom, std::string& ref, std::string& principal, std::string& terminal) {
          return terminal_named(self->state, ref, principal, terminal);
        },
        [=](terminal_viewers& v) { note_viewers(self->state, v); },
        [=](ws_snap_atom, std::string& ref, std::string& principal) { return take_snapshot_of(self, ref, principal); },
        [=](ws_snaps_atom, std::string& principal) { return snapshots_of(self, principal); },
        [=](ws_snapget_atom, std::string& id, std::string& principal) { return snapshot_named(self, id, principal); },
        [=](ws_snaprm_atom, std::string& id, std::string& principal) { return remove_snapshot_named(self, id, principal); },
        [=](ws_tick_atom) {
          expire(self);
          self->delayed_send(self, tick_interval(self->state), ws_tick_atom::value);
        },
        [=](stop_atom) {
          // The files stay for the next runtime: stopping is not ending.
          self->state.stopped = true;
          return true;
        },
    };
  }, std::move(config));
}

} // namespace corral
