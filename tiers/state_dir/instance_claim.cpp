#include "tiers/state_dir/instance_claim.hpp"
#include "tiers/jail/scratch_dir.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace corral {

namespace {

const std::string kScratchPrefix = "corral-";
const std::string kPendingSuffix = ".pending";
constexpr std::chrono::seconds kPendingMinAge{60};

// The instance in a scratch dir's name (`corral-<instance>-<n>-XXXXXX`), or empty.
std::string instance_of(const std::string& scratch_name) {
  if (scratch_name.compare(0, kScratchPrefix.size(), kScratchPrefix) != 0) return "";
  auto start = kScratchPrefix.size();
  auto dash = scratch_name.find('-', start);
  if (dash == std::string::npos || dash == start) return "";
  return scratch_name.substr(start, dash - start);
}

std::string owners_dir(const std::string& state_dir) { return state_dir + "/owners"; }

} // namespace

std::string random_instance_name() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 8; ++i) s += hex[rd() % 16];
  return s;
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  return out;
}

instance_claim::instance_claim(std::string path, std::string instance, int fd)
    : path_(std::move(path)), instance_(std::move(instance)), fd_(fd) {}

instance_claim::instance_claim(instance_claim&& other) noexcept
    : path_(std::move(other.path_)), instance_(std::move(other.instance_)), fd_(std::exchange(other.fd_, -1)) {}

instance_claim::~instance_claim() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still locked: no sweep can mistake it for a dead one
  ::close(fd_);
}

expected<instance_claim> instance_claim::take(const std::string& state_dir) {
  auto dir = owners_dir(state_dir);
  if (::mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST)
    return make_failure(failure_kind::internal, "mkdir " + dir + ": " + std::strerror(errno));
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto instance = random_instance_name();
    // Locked before it has its name: a sweep never sees the claim unlocked while alive.
    auto pending = dir + "/" + instance + "." + std::to_string(::getpid()) + kPendingSuffix;
    int fd = ::open(pending.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return make_failure(failure_kind::internal, "create " + pending + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      ::close(fd);
      ::unlink(pending.c_str());
      return make_failure(failure_kind::internal, "flock " + pending + ": " + std::strerror(e));
    }
    auto path = dir + "/" + instance;
    int linked = ::link(pending.c_str(), path.c_str());
    int e = errno;
    ::unlink(pending.c_str());
    if (linked == 0) return instance_claim(path, instance, fd);
    ::close(fd);
    if (e != EEXIST) return make_failure(failure_kind::internal, "link " + path + ": " + std::strerror(e));
  }
  return make_failure(failure_kind::internal, "no free instance name in " + dir + " after 16 tries");
}

owner_state instance_owner(const std::string& state_dir, const std::string& instance) {
  auto path = owners_dir(state_dir) + "/" + instance;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return owner_state::unknown;
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held ? owner_state::alive : owner_state::dead;
}

scratch_sweep_summary sweep_scratch(const std::string& state_dir) {
  scratch_sweep_summary sum;
  std::map<std::string, owner_state> known;  // asked once per instance
  auto owner_of = [&](const std::string& instance) {
    auto it = known.find(instance);
    if (it == known.end()) it = known.emplace(instance, instance_owner(state_dir, instance)).first;
    return it->second;
  };
  std::set<std::string> failed;
  auto scratch = state_dir + "/scratch";
  for (const auto& name : dir_entries(scratch)) {
    auto instance = instance_of(name);
    if (instance.empty()) continue;  // not ours to judge
    if (owner_of(instance) != owner_state::dead) {
      ++sum.kept;
      continue;
    }
    auto path = scratch + "/" + name;
    struct stat st {};
    // Not owned by uid check: a jail's scratch dir is chowned to the jail's user. The parent
    // is ours alone (0700), and remove_all unlinks symlinks without following them.
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    // The one owner of scratch dirs removes it: a root runtime's is a tmpfs to unmount.
    if (auto ec = remove_orphaned_scratch_dir(path)) {
      sum.errors.push_back("remove " + path + ": " + ec.message());
      failed.insert(instance);
    } else {
      ++sum.removed;
    }
  }
  auto owners = owners_dir(state_dir);
  for (const auto& name : dir_entries(owners)) {
    auto path = owners + "/" + name;
    if (name.size() > kPendingSuffix.size() &&
        name.compare(name.size() - kPendingSuffix.size(), kPendingSuffix.size(), kPendingSuffix) == 0) {
      // A claim being made lives for microseconds, but between its creation and its flock
      // it is unlocked: only an old pending one is a crashed runtime's.
      struct stat st {};
      if (::lstat(path.c_str(), &st) == 0 &&
          std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtime) >= kPendingMinAge)
        ::unlink(path.c_str());
      continue;
    }
    // Its scratch dirs are gone (or it had none): the dead claim goes last. A failed
    // removal above leaves the claim, so the next sweep tries again.
    if (owner_of(name) == owner_state::dead && !failed.count(name) && ::unlink(path.c_str()) == 0)
      ++sum.claims_removed;
  }
  return sum;
}

} // namespace corral
