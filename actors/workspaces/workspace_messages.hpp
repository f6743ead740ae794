// The workspace registry's protocol (actors/workspaces/workspace_registry.hpp). Every call
// names its principal: a workspace answers only the principal that created it, and another
// principal's workspace gets the same answer as one that does not exist.
//
//   (ws_create_atom, workspace_options, principal) -> workspace_reply
//   (ws_list_atom, principal)                      -> workspace_list
//   (ws_get_atom, ref, principal)                  -> workspace_reply
//   (ws_end_atom, ref, principal, keep_files)      -> workspace_reply   (the info as it ended)
//   (ws_borrow_atom, ref, principal, running_item) -> workspace_borrowed (an execution's or a
//                                                   session's start: what it runs, for the journal)
//   (ws_return_atom, id, loan, left_running)                             (its end; left_running: its
//                                                   background processes stayed in the workspace)
//   (ws_files_atom, ref, principal, file_call)     -> file_reply        (workspace_files.hpp)
//   (ws_mark_atom, ref, principal, label)          -> changes_reply     (the mark's name)
//   (ws_changes_atom, ref, principal, since)       -> changes_reply     (since "creation" or a mark)
//   (ws_snap_atom, ref, principal)                 -> snapshot_reply    (workspace_snapshots.hpp)
//   (ws_snaps_atom, principal)                     -> snapshot_list
//   (ws_snapget_atom, snapshot id, principal)      -> snapshot_reply
//   (ws_snaprm_atom, snapshot id, principal)       -> snapshot_reply    (the record as it was)
//   (ws_pause_atom, ref, principal)                -> workspace_reply   (freezes what runs in it)
//   (ws_resume_atom, ref, principal)               -> workspace_reply
//   (ws_ps_atom, ref, principal)                   -> process_list      (workspace_holder.hpp)
//   (ws_kill_atom, ref, principal, pid, signal)    -> workspace_reply   (pid as the workspace sees it)
//   (ws_resident_atom, id, loan, terminal, number, argv)                (the supervisor: a terminal
//                                                   opened on that loan now belongs to the workspace)
//   (ws_terms_atom, ref, principal)                -> terminal_list     (its terminals)
//   (ws_term_atom, ref, principal, terminal)       -> terminal_found    ("" : the latest started)
//   terminal_viewers                                                    (from its terminals)
//   (stop_atom)                                    -> bool
//
// `ref` is a workspace's id or its owner's name for it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include "config/failure.hpp"
#include "tiers/workspace/change_manifest.hpp"
#include "tiers/workspace/snapshot_record.hpp"
#include "tiers/workspace/workspace_record.hpp"
#include "tiers/workspace/workspace_tree.hpp"

namespace corral {

using ws_create_atom = caf::atom_constant<caf::atom("wscreate")>;
using ws_list_atom = caf::atom_constant<caf::atom("wslist")>;
using ws_get_atom = caf::atom_constant<caf::atom("wsget")>;
using ws_end_atom = caf::atom_constant<caf::atom("wsend")>;
using ws_borrow_atom = caf::atom_constant<caf::atom("wsborrow")>;
using ws_return_atom = caf::atom_constant<caf::atom("wsreturn")>;
using ws_tick_atom = caf::atom_constant<caf::atom("wstick")>;
using ws_files_atom = caf::atom_constant<caf::atom("wsfiles")>;
using ws_mark_atom = caf::atom_constant<caf::atom("wsmark")>;
using ws_changes_atom = caf::atom_constant<caf::atom("wschanges")>;
using ws_scan_atom = caf::atom_constant<caf::atom("wsscan")>;
using ws_diff_atom = caf::atom_constant<caf::atom("wsdiff")>;
using ws_snap_atom = caf::atom_constant<caf::atom("wssnap")>;
using ws_snaps_atom = caf::atom_constant<caf::atom("wssnaps")>;
using ws_snapget_atom = caf::atom_constant<caf::atom("wssnapget")>;
using ws_snaprm_atom = caf::atom_constant<caf::atom("wssnaprm")>;
using ws_restore_atom = caf::atom_constant<caf::atom("wsrestore")>;
using ws_pause_atom = caf::atom_constant<caf::atom("wspause")>;
using ws_resume_atom = caf::atom_constant<caf::atom("wsresume")>;
using ws_ps_atom = caf::atom_constant<caf::atom("wsps")>;
using ws_kill_atom = caf::atom_constant<caf::atom("wskill")>;
using ws_resident_atom = caf::atom_constant<caf::atom("wsresident")>;
using ws_terms_atom = caf::atom_constant<caf::atom("wsterms")>;
using ws_term_atom = caf::atom_constant<caf::atom("wsterm")>;

// Largest piece of a file one read returns, and of data one write or append carries: a
// bigger file moves in pieces (the daemon's lines are bounded too).
inline constexpr std::uint64_t kMaxFilePiece = 4 << 20;

// One file operation on a workspace's files, from the host side, resolved beneath its
// root (tiers/workspace/workspace_tree.hpp). Paths are the jail's (/work/…) or relative.
struct file_call {
  enum class op : std::uint8_t { read, write, append, list, stat, mkdir, remove, move };
  op what = op::stat;
  std::string path;
  std::string to;    // move's destination
  std::string data;  // write, append
  std::uint32_t mode = 0644;
  std::uint64_t offset = 0;                // read
  std::uint64_t length = kMaxFilePiece;    // read: at most this (and kMaxFilePiece)
  unsigned depth = 1;                      // list
  std::size_t max_entries = 10'000;        // list
  bool recursive = false;                  // remove
  bool parents = false;                    // mkdir, write
};

struct file_reply {
  bool ok = false;
  failure error;
  file_chunk chunk;      // read
  tree_entry entry;      // stat, and what write, append, mkdir and move leave (move: the target)
  tree_listing listing;  // list
};

// The files of a workspace as they are now (an execution's "before", exec_request::changes).
struct tree_manifest {
  bool ok = false;
  failure error;
  std::shared_ptr<const std::vector<manifest_entry>> entries;
};

struct changes_reply {
  bool ok = false;
  failure error;
  std::string mark;  // the mark set (ws_mark_atom), or the one compared against
  std::vector<tree_change> changes;
  bool truncated = false;
  std::size_t scanned = 0;  // entries in the tree now
};

// Where every execution in a workspace sees its files (the landlock tier's /work).
inline constexpr const char* kWorkspaceMountAt = "/work";

// What a create may ask for; each only narrows the operator's settings and limits.
struct workspace_options {
  std::string name;
  std::optional<std::chrono::milliseconds> idle_timeout;
  std::optional<std::chrono::milliseconds> lifetime;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> pids;
  std::optional<double> cpu_cores;
  bool keep_files = false;
  std::string from_snapshot;  // a snapshot id of the same principal: the files start as it holds them
  // A second place its files appear inside, besides /work (the E2B user's /home/user):
  // absolute, and where a root could go (config/root_layout.hpp). Empty: only /work.
  std::string home;
};

enum class workspace_phase : std::uint8_t { ready, snapshotting, restoring, paused };

inline const char* to_string(workspace_phase p) {
  switch (p) {
    case workspace_phase::ready: return "ready";
    case workspace_phase::paused: return "paused";
    case workspace_phase::snapshotting: return "snapshotting";
    case workspace_phase::restoring: return "restoring";
  }
  return "ready";
}

// The wire's view of one workspace (no host path: callers see only the inside).
struct workspace_info {
  workspace_record record;
  workspace_phase phase = workspace_phase::ready;
  std::string mount_at = kWorkspaceMountAt;
  std::size_t running = 0;          // executions in it now
  std::size_t terminals = 0;        // terminals it keeps (they outlive their clients)
  std::int64_t idle_left_ms = 0;    // until the idle timeout ends it (while nothing runs)
  std::int64_t last_used_at = 0;    // unix seconds
  // What a workspace promises that this version does not hold (said in every reply).
  std::vector<std::string> not_enforced;
};

struct workspace_reply {
  bool ok = false;
  failure error;
  workspace_info info;
};

struct workspace_list {
  std::vector<workspace_info> items;
};

// An execution's hold on a workspace: where its files are, and the ceiling its limits
// narrow further. Given back with ws_return_atom when the execution ends.
struct workspace_borrowed {
  bool ok = false;
  failure error;
  std::string id;
  std::uint64_t loan = 0;  // names this borrow when it is given back
  std::string root;  // host path of the workspace's files: the execution's /work
  workspace_record record;
  // Its holder (workspace_holder.hpp): the execution's steps enter it under a share of its
  // lease. Null where the workspace has none (the allow-list network mode, whose proxy
  // decides per execution): each step is then a jail of its own with the files at /work.
  caf::actor holder;
};

// A terminal a workspace keeps: it outlives the client that opened it, and any client of
// the workspace's owner may attach to it again (actors/sessions/terminal_session.hpp).
struct terminal_listing {
  std::string id;  // "t7": resident_terminal_id
  std::vector<std::string> argv;
  std::int64_t started_at = 0;  // unix seconds
  std::uint32_t viewers = 0;
  bool writer = false;  // one of the viewers writes
};

inline std::string resident_terminal_id(std::uint64_t number) { return "t" + std::to_string(number); }

struct terminal_list {
  bool ok = false;
  failure error;
  std::vector<terminal_listing> items;  // oldest first
};

struct terminal_found {
  bool ok = false;
  failure error;
  caf::actor actor;
  std::uint64_t number = 0;  // the session number its messages carry
  std::string workspace;     // the workspace's id
  terminal_listing listing;
};

// What one snapshot is taken as.
struct snapshot_job {
  std::string snapshots_dir;
  snapshot_record record;  // id, owner, source and source_name set; the rest is filled in
};

struct snapshot_reply {
  bool ok = false;
  failure error;
  snapshot_record record;
};

struct snapshot_list {
  std::vector<snapshot_record> items;
};

} // namespace corral

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::snapshot_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::running_item)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::terminal_found)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::snapshot_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::snapshot_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::workspace_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::workspace_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::workspace_list)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::workspace_borrowed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::file_call)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::file_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::changes_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(corral::tree_manifest)
