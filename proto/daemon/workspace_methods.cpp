#include "proto/daemon/workspace_methods.hpp"
#include "proto/daemon/terminal_attach.hpp"

#include <csignal>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/workspaces/workspace_holder.hpp"
#include "actors/workspaces/workspace_snapshots.hpp"
#include "proto/jsonrpc/param_values.hpp"
#include "proto/jsonrpc/workspace_json.hpp"

namespace corral {

namespace {

using nlohmann::json;

// The registry answers from memory; file calls, marks and change lists hash and walk a
// tree on a worker of their own, bounded by the tree's size (kMaxTreeEntries): a minute
// covers the largest one this machine class scans, and a wedged registry still answers.
constexpr std::chrono::seconds kRegistryBound{10};
constexpr std::chrono::seconds kTreeBound{120};
// A snapshot or a restore compresses or unpacks the whole tree: ten minutes covers a
// million entries and gigabytes on this machine class.
constexpr std::chrono::seconds kArchiveBound{600};

// What went wrong in a reply, if anything (a list cannot fail).
template <class Reply>
const failure* failed(const Reply& reply) {
  return reply.ok ? nullptr : &reply.error;
}
const failure* failed(const workspace_list&) { return nullptr; }
const failure* failed(const snapshot_list&) { return nullptr; }

// One call to the registry, counted as in flight until its answer is written, so the
// connection neither idles out nor hangs up under it.
template <class Reply, class OnReply, class... Ts>
void ask(connection_self self, const rpc::request& r, std::chrono::seconds bound, OnReply on_reply, Ts&&... xs) {
  auto& st = self->state;
  ++st.calls_pending;
  auto id = r.id;
  auto method = r.method;
  self->request(st.info->workspaces, bound, std::forward<Ts>(xs)...)
      .then(
          [=](Reply& reply) {
            if (auto* f = failed(reply)) reply_failure(self, *f, id);
            else write_line(self, rpc::response_line(id, on_reply(reply)));
            call_answered(self);
          },
          [=](caf::error& e) {
            reply_failure(self,
                          make_failure(failure_kind::internal, method + ": the workspace registry did not answer: " +
                                                                   self->system().render(e)),
                          id);
            call_answered(self);
          });
}

void create(connection_self self, const rpc::request& r) {
  auto options = workspace_options_from_json(r.params);
  if (!options) return reply_failure(self, options.error(), r.id);
  auto bound = options->from_snapshot.empty() ? kRegistryBound : kArchiveBound;
  ask<workspace_reply>(self, r, bound, [](workspace_reply& w) { return to_json(w.info); },
                       ws_create_atom::value, std::move(*options), connection_principal(self));
}

void list(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {})) return;
  ask<workspace_list>(
      self, r, kRegistryBound,
      [](workspace_list& l) {
        json items = json::array();
        for (auto& w : l.items) items.push_back(to_json(w));
        return json{{"workspaces", std::move(items)}};
      },
      ws_list_atom::value, connection_principal(self));
}

void inspect(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  ask<workspace_reply>(self, r, kRegistryBound, [](workspace_reply& w) { return to_json(w.info); }, ws_get_atom::value,
                       std::move(*ref), connection_principal(self));
}

void end(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace", "keep_files"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  bool keep = false;
  if (auto it = r.params.find("keep_files"); it != r.params.end())
    if (auto s = read_into(bool_param(*it, "keep_files"), keep); !s) return reply_failure(self, s.error(), r.id);
  ask<workspace_reply>(
      self, r, kRegistryBound,
      [keep](workspace_reply& w) {
        auto j = to_json(w.info);
        j["ended"] = true;
        j["files_kept"] = keep;
        return j;
      },
      ws_end_atom::value, std::move(*ref), connection_principal(self), keep);
}

// workspace.pause and workspace.resume.
template <class Atom>
void pause_or_resume(connection_self self, const rpc::request& r, Atom atom) {
  if (!only_params(self, r, {"workspace"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  ask<workspace_reply>(self, r, kRegistryBound, [](workspace_reply& w) { return to_json(w.info); }, atom, std::move(*ref),
                       connection_principal(self));
}

void processes(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  ask<process_list>(
      self, r, kRegistryBound,
      [](process_list& l) {
        json items = json::array();
        for (auto& p : l.items) items.push_back(to_json(p));
        return json{{"processes", std::move(items)}};
      },
      ws_ps_atom::value, std::move(*ref), connection_principal(self));
}

void terminals(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  ask<terminal_list>(
      self, r, kRegistryBound,
      [](terminal_list& l) {
        json items = json::array();
        for (auto& t : l.items) items.push_back(to_json(t));
        return json{{"terminals", std::move(items)}};
      },
      ws_terms_atom::value, std::move(*ref), connection_principal(self));
}

void kill(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace", "pid", "signal"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  auto it = r.params.find("pid");
  if (it == r.params.end() || !it->is_number_integer() || it->get<long long>() < 2 || it->get<long long>() > 4194304)
    return reply_failure(self, bad_param("pid", "given: the pid of a process in the workspace, as workspace.ps lists it"),
                         r.id);
  int pid = static_cast<int>(it->get<long long>());
  int sig = SIGTERM;
  if (auto s = r.params.find("signal"); s != r.params.end())
    if (auto read = read_into(signal_param(*s, "signal"), sig); !read) return reply_failure(self, read.error(), r.id);
  ask<workspace_reply>(
      self, r, kRegistryBound,
      [pid, sig](workspace_reply&) { return json{{"pid", pid}, {"signal", sig}, {"sent", true}}; },
      ws_kill_atom::value, std::move(*ref), connection_principal(self), pid, sig);
}

void files(connection_self self, const rpc::request& r, const std::string& op) {
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  auto call = file_call_from_json(op, r.params);
  if (!call) {
    // An unknown op is an unknown method, as any other name the daemon does not serve.
    if (call.error().message.rfind("no file operation", 0) == 0)
      return reply_error(self, rpc::kMethodNotFound, "unknown method \"" + r.method + "\"", r.id);
    return reply_failure(self, call.error(), r.id);
  }
  auto asked = *call;
  ask<file_reply>(self, r, kTreeBound, [asked](file_reply& f) { return to_json(asked, f, kWorkspaceMountAt); },
                  ws_files_atom::value, std::move(*ref), connection_principal(self), std::move(*call));
}

void mark(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace", "label"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  auto it = r.params.find("label");
  if (it == r.params.end())
    return reply_failure(self, bad_param("label", "given: a name for the mark (a-z 0-9 . _ -)"), r.id);
  auto label = string_param(*it, "label");
  if (!label) return reply_failure(self, label.error(), r.id);
  ask<changes_reply>(self, r, kTreeBound, [](changes_reply& c) { return json{{"mark", c.mark}, {"scanned", c.scanned}}; },
                     ws_mark_atom::value, std::move(*ref), connection_principal(self), std::move(*label));
}

void changes(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace", "since"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  std::string since = "creation";
  if (auto it = r.params.find("since"); it != r.params.end())
    if (auto s = read_into(string_param(*it, "since"), since); !s) return reply_failure(self, s.error(), r.id);
  ask<changes_reply>(self, r, kTreeBound, [](changes_reply& c) { return to_json(c, kWorkspaceMountAt); },
                     ws_changes_atom::value, std::move(*ref), connection_principal(self), std::move(since));
}

void snapshot(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {"workspace"})) return;
  auto ref = workspace_ref_param(r.params);
  if (!ref) return reply_failure(self, ref.error(), r.id);
  ask<snapshot_reply>(self, r, kArchiveBound, [](snapshot_reply& s) { return to_json(s.record); }, ws_snap_atom::value,
                      std::move(*ref), connection_principal(self));
}

void list_snapshots(connection_self self, const rpc::request& r) {
  if (!only_params(self, r, {})) return;
  ask<snapshot_list>(
      self, r, kRegistryBound,
      [](snapshot_list& l) {
        json items = json::array();
        for (auto& s : l.items) items.push_back(to_json(s));
        return json{{"snapshots", std::move(items)}};
      },
      ws_snaps_atom::value, connection_principal(self));
}

// snapshot.inspect and snapshot.remove: one snapshot, named by its id.
template <class Atom>
void one_snapshot(connection_self self, const rpc::request& r, Atom atom, bool removing) {
  if (!only_params(self, r, {"snapshot"})) return;
  auto it = r.params.find("snapshot");
  if (it == r.params.end())
    return reply_failure(self, bad_param("snapshot", "given: a snapshot id (s- and 12 hex digits)"), r.id);
  auto id = string_param(*it, "snapshot");
  if (!id) return reply_failure(self, id.error(), r.id);
  ask<snapshot_reply>(
      self, r, kRegistryBound,
      [removing](snapshot_reply& s) {
        auto j = to_json(s.record);
        if (removing) j["removed"] = true;
        return j;
      },
      atom, std::move(*id), connection_principal(self));
}

} // namespace

std::string connection_principal(connection_self self) {
  return "uid:" + std::to_string(self->state.peer.uid);
}

bool workspace_method(connection_self self, const rpc::request& r) {
  static const std::string files_prefix = "workspace.files.";
  if (r.method.rfind("workspace.", 0) != 0 && r.method.rfind("snapshot.", 0) != 0) return false;
  if (!self->state.info->workspaces) {
    reply_failure(self, make_failure(failure_kind::refused, "this daemon keeps no workspaces"), r.id);
    return true;
  }
  if (r.method == "workspace.create") create(self, r);
  else if (r.method == "workspace.list") list(self, r);
  else if (r.method == "workspace.inspect") inspect(self, r);
  else if (r.method == "workspace.end") end(self, r);
  else if (r.method == "workspace.pause") pause_or_resume(self, r, ws_pause_atom::value);
  else if (r.method == "workspace.resume") pause_or_resume(self, r, ws_resume_atom::value);
  else if (r.method == "workspace.ps") processes(self, r);
  else if (r.method == "workspace.kill") kill(self, r);
  else if (r.method == "workspace.terminals") terminals(self, r);
  else if (r.method == "workspace.attach") attach_terminal(self, r);
  else if (r.method == "workspace.mark") mark(self, r);
  else if (r.method == "workspace.changes") changes(self, r);
  else if (r.method == "workspace.snapshot") snapshot(self, r);
  else if (r.method == "snapshot.list") list_snapshots(self, r);
  else if (r.method == "snapshot.inspect") one_snapshot(self, r, ws_snapget_atom::value, false);
  else if (r.method == "snapshot.remove") one_snapshot(self, r, ws_snaprm_atom::value, true);
  else if (r.method.rfind(files_prefix, 0) == 0) files(self, r, r.method.substr(files_prefix.size()));
  else reply_error(self, rpc::kMethodNotFound, "unknown method \"" + r.method + "\"", r.id);
  return true;
}

} // namespace corral
