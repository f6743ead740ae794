// The embeddable runtime: what an agent host links against. One actor system, one libuv
// I/O thread, one supervisor, and the frozen profile.
//
//   auto rt = corral::runtime::start(options);       // detects the kernel, sweeps leftovers
//   auto result = (*rt)->exec(request);              // blocking; or exec_async with a callback
//   auto streamed = (*rt)->exec(request, callbacks); // output as it arrives (actors/exec_streaming.hpp)
//
// Sessions (long-lived children; protocol in actors/sessions/session_messages.hpp):
//   auto s = (*rt)->open_session(request, owner);    // stdio: messages and the end go to owner
//   auto t = (*rt)->open_terminal(request);          // pty: clients attach with attach_atom
//   actors/session_client.hpp wraps a stdio session in a blocking class.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include "actors/exec_request.hpp"
#include "actors/exec_result.hpp"
#include "actors/exec_streaming.hpp"
#include "actors/sessions/session_messages.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "tiers/workspace/workspace_processes.hpp"
#include "config/failure.hpp"
#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

// The exec helper spawned ahead for the next cold launch (io_loop::keep_spare_helper):
// kept (a new one after each take), once (the first launch only: a one-shot command), or
// none. A spare left at a process's exit gets its parent-death SIGTERM.
enum class spare_helper_mode : std::uint8_t { none, once, kept };

struct runtime_options {
  profile prof;
  // The --allow-host flag; CORRAL_ALLOW_HOST=1 in the environment counts too, and
  // CORRAL_PRODUCTION=1 refuses the host tier whatever is set here.
  bool allow_host = false;
  std::string exec_helper;  // empty: beside the running program, then the installed path
  std::string state_dir;    // empty: /run/corral for root, else $XDG_RUNTIME_DIR/corral or /tmp/corral-<uid>
  std::size_t max_concurrent = 16;
  // The most jails of the profile's tier armed ahead of requests (landlock only; 0: every
  // execution starts cold). The pool keeps as many as executions wanted one at the same
  // time within the last warm_demand_window, at least one. Each holds a cgroup, a scratch
  // dir and two idle processes while it waits.
  std::size_t warm_jails = 8;
  std::chrono::milliseconds warm_demand_window{60'000};
  spare_helper_mode spare_helper = spare_helper_mode::kept;
  // Runs on the actor system's configuration before the system starts: a node loads the
  // middleman and TLS there (proto/nodes/node_listener.hpp).
  std::function<void(caf::actor_system_config&)> configure_system;
  // Where workspaces keep their files; empty: the profile's [sandbox.workspaces] dir, or
  // its default (config/workspace_settings.hpp).
  std::string workspaces_dir;
};

class runtime {
public:
  static expected<std::unique_ptr<runtime>> start(runtime_options options);
  ~runtime();  // cancels every execution and waits for their leases to finish

  // For a process that exits next (the CLI's one-shot commands): ends what the destructor
  // ends — every execution and session, their leases, cgroups and scratch dirs, and this
  // runtime's claim on its state dir — but leaves the actor system's threads and the I/O
  // loop to the exit, which ends them without joining each (about 1.4 ms of a one-shot
  // run here). Afterwards only the destructor may be called.
  void stop_before_exit();

  expected<exec_result> exec(const exec_request& request);
  // Blocking, with the output streamed to `output`'s callbacks on this thread as it
  // arrives, and cancellable through `control` from any thread (actors/exec_streaming.hpp).
  expected<exec_result> exec(const exec_request& request, const output_callbacks& output,
                             exec_control* control = nullptr);
  void exec_async(const exec_request& request, std::function<void(expected<exec_result>)> done);

  // Opens a stdio session on the request's tier (or the profile's). `owner` receives
  // session_message (only while it has credit: send (ack_atom, n) to grant n more),
  // session_refused and, last, session_ended; its death cancels the session. The session
  // takes send_atom, ack_atom, close_atom, cancel_atom and info_atom. Sessions do not count
  // against max_concurrent; the runtime's destructor cancels those still open.
  expected<session_handle> open_session(const session_request& request, caf::actor owner);
  // Opens a terminal session: a pty child whose lifetime is independent of the caller.
  // Clients send (attach_atom, client, writer, take_over) to get the scrollback and then
  // terminal_output (several may view, one writes; actors/sessions/session_messages.hpp);
  // input_atom, resize_atom, detach_atom, cancel_atom and info_atom drive it. In a
  // workspace (request.workspace) it belongs to the workspace: found again with
  // workspace_terminal, ended with the workspace.
  expected<session_handle> open_terminal(const terminal_request& request);

  // Workspaces (actors/workspaces/workspace_registry.hpp): named, persistent /work dirs that
  // executions run in (exec_request::workspace). `principal` is who may use them after.
  expected<workspace_info> create_workspace(const workspace_options& options, const std::string& principal = "lib");
  std::vector<workspace_info> list_workspaces(const std::string& principal = "lib");
  expected<workspace_info> inspect_workspace(const std::string& ref, const std::string& principal = "lib");
  expected<workspace_info> end_workspace(const std::string& ref, bool keep_files = false,
                                         const std::string& principal = "lib");
  // Pause freezes everything running in the workspace (its cgroup's freezer) and lends it to
  // no execution until resumed; refused while an execution or session runs in it.
  expected<workspace_info> pause_workspace(const std::string& ref, const std::string& principal = "lib");
  expected<workspace_info> resume_workspace(const std::string& ref, const std::string& principal = "lib");
  // The processes living in the workspace (background ones an execution left running), by
  // their pid inside it; and a signal to one of them.
  expected<std::vector<workspace_process>> workspace_processes(const std::string& ref,
                                                               const std::string& principal = "lib");
  // The terminals a workspace keeps, oldest first; one of them by id ("" : the latest),
  // to attach to.
  expected<std::vector<terminal_listing>> workspace_terminals(const std::string& ref, const std::string& principal = "lib");
  expected<session_handle> workspace_terminal(const std::string& ref, const std::string& terminal = "",
                                              const std::string& principal = "lib");
  expected<workspace_info> signal_in_workspace(const std::string& ref, int pid, int signal,
                                               const std::string& principal = "lib");
  // A file operation on a workspace's files (actors/workspaces/workspace_messages.hpp).
  expected<file_reply> workspace_file(const std::string& ref, const file_call& call, const std::string& principal = "lib");
  // Marks the files as they are now as `label`; `changes` lists what differs since a mark
  // ("creation": since the workspace was made).
  expected<changes_reply> mark_workspace(const std::string& ref, const std::string& label,
                                         const std::string& principal = "lib");
  expected<changes_reply> workspace_changes(const std::string& ref, const std::string& since = "creation",
                                            const std::string& principal = "lib");
  // Snapshots: a quiet workspace's files archived with their digest, to create new
  // workspaces from (workspace_options::from_snapshot); actors/workspaces/workspace_snapshots.hpp.
  expected<snapshot_record> snapshot_workspace(const std::string& ref, const std::string& principal = "lib");
  std::vector<snapshot_record> list_snapshots(const std::string& principal = "lib");
  expected<snapshot_record> inspect_snapshot(const std::string& id, const std::string& principal = "lib");
  expected<snapshot_record> remove_snapshot(const std::string& id, const std::string& principal = "lib");
  caf::actor workspaces() const;
  const std::string& workspaces_dir() const;

  caf::actor_system& system();
  caf::actor supervisor() const;
  const kernel_features& features() const;
  const tier_registry& tiers() const;
  const profile& frozen_profile() const;
  const std::string& state_dir() const;
  std::size_t max_concurrent() const;  // executions it runs at once; the rest wait
  // Processes the I/O loop still tracks (tests: nothing may be left behind); warm jails
  // waiting armed are not counted.
  std::size_t tracked_processes() const;
  // Warm jails armed and waiting now (see runtime_options::warm_jails).
  std::size_t warm_jails_ready();

private:
  struct impl;
  explicit runtime(std::unique_ptr<impl> p);
  void stop_actors();  // the supervisor's stop (every lease finished), then its exit
  std::unique_ptr<impl> impl_;
};

// The exec helper next to `program_dir`, or the installed one; empty when neither exists.
std::string find_exec_helper();

} // namespace corral
