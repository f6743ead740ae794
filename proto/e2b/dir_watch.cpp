#include "proto/e2b/dir_watch.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <vector>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "actors/atoms.hpp"
#include "proto/e2b/e2b_json.hpp"
#include "proto/e2b/e2b_messages.hpp"
#include "tiers/workspace/beneath_fd.hpp"
#include "tiers/workspace/workspace_tree.hpp"

namespace corral {

namespace {

using json = nlohmann::json;

// Not IN_DONT_FOLLOW: the path is /proc/self/fd/N, a magic link to the directory already
// opened with no link followed; IN_DONT_FOLLOW would watch the magic link itself.
constexpr std::uint32_t kEvents = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB |
                                  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;
constexpr int kPollMs = 100;
// Events the stream may hold unacknowledged; past it the kernel's queue holds them.
constexpr std::uint64_t kWindow = 256;

struct watcher {
  owned_fd inotify;
  owned_fd root;
  std::map<int, std::string> dirs;  // watch descriptor -> directory, relative to the watched one
  int top = -1;                     // the watched directory's own descriptor
  std::string base;                 // the watched directory beneath the root
  bool recursive = false;
  std::string error;                // why it stopped, when it stopped on its own

  std::string beneath(const std::string& rel) const {
    if (rel.empty()) return base;
    return base == "." ? rel : base + "/" + rel;
  }

  // Adds the directory `rel` (relative to the watched one), opened beneath the root with no
  // link followed: the watch is on that very directory, through its descriptor. `found`
  // (for a directory created while watching) collects what it already holds: entries made
  // before its watch existed, which inotify never reports.
  bool add(const std::string& rel, std::vector<std::string>* found = nullptr) {
    owned_fd dir(open_beneath(root.get(), beneath(rel), O_PATH | O_DIRECTORY, link_policy::no_links));
    if (!dir.valid()) return rel.empty() ? (error = "cannot open " + beneath(rel) + ": " + std::strerror(errno), false)
                                         : true;  // not a directory, gone again, or a link: not followed
    if (dirs.size() >= kMaxWatchedDirs) {
      error = "more than " + std::to_string(kMaxWatchedDirs) + " directories to watch";
      return false;
    }
    std::string proc = "/proc/self/fd/" + std::to_string(dir.get());
    int wd = ::inotify_add_watch(inotify.get(), proc.c_str(), kEvents);
    if (wd < 0) {
      if (rel.empty()) error = "inotify_add_watch " + beneath(rel) + ": " + std::strerror(errno);
      return !rel.empty();
    }
    dirs[wd] = rel;
    if (rel.empty()) top = wd;
    if (!recursive) return true;
    bool more = false;
    auto names = directory_names(dir.get(), kMaxWatchedDirs, more);
    if (!names) return true;
    for (auto& n : *names) {
      std::string child = rel.empty() ? n : rel + "/" + n;
      if (found && n.rfind(kWriteTempPrefix, 0) != 0) found->push_back(child);
      if (!add(child, found)) return false;  // a file is skipped by the open above
    }
    return true;
  }
};

// As envd reports them (Go's fsnotify): a name moved in is created, one moved out renamed.
const char* event_type(std::uint32_t mask) {
  if (mask & (IN_CREATE | IN_MOVED_TO)) return "EVENT_TYPE_CREATE";
  if (mask & IN_DELETE) return "EVENT_TYPE_REMOVE";
  if (mask & IN_MOVED_FROM) return "EVENT_TYPE_RENAME";
  if (mask & IN_MODIFY) return "EVENT_TYPE_WRITE";
  if (mask & IN_ATTRIB) return "EVENT_TYPE_CHMOD";
  return nullptr;
}

void run(caf::blocking_actor* self, dir_watch_spec spec, caf::actor subscriber) {
  auto finish = [&](const std::string& code, const std::string& message) {
    self->send(subscriber, e2b_stream_end{stream_end(code, message)});
  };
  watcher w;
  w.base = spec.relative.empty() ? "." : spec.relative;
  w.recursive = spec.recursive;
  w.root = owned_fd(::open(spec.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  w.inotify = owned_fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!w.root.valid() || !w.inotify.valid()) return finish("internal", "the watch could not start: " + std::string(std::strerror(errno)));
  if (!w.add("")) return finish("not_found", w.error);
  self->monitor(subscriber);
  std::uint64_t unacked = 1;
  self->send(subscriber, e2b_event{R"({"start":{}})"});
  auto deadline = spec.timeout.count() > 0 ? std::chrono::steady_clock::now() + spec.timeout
                                           : std::chrono::steady_clock::time_point::max();
  bool running = true;
  alignas(inotify_event) char buf[64 * 1024];
  while (running) {
    if (std::chrono::steady_clock::now() >= deadline) return finish("", "");
    // The mailbox: acknowledgements, the client gone, the sandbox ending.
    for (bool more = true; more && running;)
      self->receive([&](ack_atom, std::uint64_t n) { unacked -= std::min(unacked, n); },
                    [&](caf::down_msg&) { running = false; },
                    [&](cancel_atom) {
                      finish("", "");
                      running = false;
                    },
                    caf::after(std::chrono::milliseconds(0)) >> [&] { more = false; });
    if (!running) return;
    if (unacked >= kWindow) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs / 4));
      continue;
    }
    pollfd p{w.inotify.get(), POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    auto n = ::read(w.inotify.get(), buf, sizeof buf);
    for (char* at = buf; n > 0 && at < buf + n;) {
      auto* e = reinterpret_cast<inotify_event*>(at);
      at += sizeof(inotify_event) + e->len;
      if (e->mask & IN_Q_OVERFLOW) return finish("resource_exhausted", "too many changes at once: events were lost");
      if (e->wd == w.top && (e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))) return finish("", "");
      auto dir = w.dirs.find(e->wd);
      if (dir == w.dirs.end() || e->len == 0) continue;
      // The files API's own staging file (then renamed over its target): not the sandbox's.
      if (std::strncmp(e->name, kWriteTempPrefix, std::strlen(kWriteTempPrefix)) == 0) continue;
      std::string name = dir->second.empty() ? e->name : dir->second + "/" + e->name;
      auto report = [&](const std::string& what, const char* type) {
        ++unacked;
        self->send(subscriber, e2b_event{json{{"filesystem", {{"name", what}, {"type", type}}}}.dump()});
      };
      if (const char* type = event_type(e->mask)) report(name, type);
      if (w.recursive && (e->mask & IN_ISDIR) && (e->mask & (IN_CREATE | IN_MOVED_TO))) {
        std::vector<std::string> already;
        if (!w.add(name, &already)) return finish("resource_exhausted", w.error);
        for (auto& a : already) report(a, "EVENT_TYPE_CREATE");
      }
    }
  }
}

} // namespace

caf::actor spawn_dir_watch(caf::actor_system& system, dir_watch_spec spec, caf::actor subscriber) {
  return system.spawn<caf::detached>(run, std::move(spec), std::move(subscriber));
}

} // namespace corral
