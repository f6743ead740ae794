// envd's filesystem.Filesystem/WatchDir for one stream: inotify on a directory of the
// sandbox's files, opened beneath the workspace's root without following a link (a link
// the sandbox planted cannot point the watch at a host directory), its subdirectories too
// when recursive (bounded), each change sent to the stream as a FilesystemEvent. A blocking
// actor on a thread of its own, like the registry's file workers: it polls the inotify
// descriptor it owns and its mailbox in turn.
//
// It ends, with the end frame, when the stream's client goes (the subscriber's down), at
// the watch's timeout (Connect-Timeout-Ms), when the watched directory goes, on cancel
// (the sandbox ends), or when the kernel's event queue overflowed (an error: events lost).
#pragma once

#include <chrono>
#include <string>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

namespace corral {

struct dir_watch_spec {
  std::string root;      // the workspace's files on the host
  std::string relative;  // the watched directory beneath it ("." : the root)
  bool recursive = false;
  std::chrono::milliseconds timeout{0};  // 0: until the client goes
};

// Directories one recursive watch follows at most; past it the watch ends with an error.
inline constexpr std::size_t kMaxWatchedDirs = 4096;

caf::actor spawn_dir_watch(caf::actor_system& system, dir_watch_spec spec, caf::actor subscriber);

} // namespace corral
