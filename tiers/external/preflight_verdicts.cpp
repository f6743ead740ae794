#include "tiers/external/preflight_verdicts.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "config/replace_file.hpp"

namespace corral {

namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace

std::string preflight_verdicts::key(const std::string& tier, const std::string& engine, const std::string& settings) {
  struct stat st {};
  std::string binary = engine;
  if (::stat(engine.c_str(), &st) == 0)
    binary += " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
              std::to_string(st.st_mtim.tv_nsec);
  utsname u{};
  ::uname(&u);
  return "tier=" + tier + "\nengine=" + binary + "\nsettings=" + settings + "\nkernel=" + u.release +
         "\nuid=" + std::to_string(::geteuid()) + "\n";
}

std::string preflight_verdicts::file_for(const std::string& key) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  return dir_ + "/" + name + ".ok";
}

bool preflight_verdicts::fresh_success(const std::string& key) const {
  if (dir_.empty()) return false;
  auto path = file_for(key);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  std::string text;
  char buf[4096];
  bool ours = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid();
  for (ssize_t n; ours && (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  if (!ours || text != key) return false;
  auto age = std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
  return age >= std::chrono::seconds(0) && age < lifetime_;
}

void preflight_verdicts::record_success(const std::string& key) const {
  if (dir_.empty()) return;
  ::mkdir(dir_.c_str(), 0700);
  auto path = file_for(key);
  replace_file(path, path + ".tmp." + std::to_string(::getpid()), key, false);  // a lost one is only re-tried
}

} // namespace corral
