#include "tiers/jail/jail_spec.hpp"

#include <cstring>

namespace corral {

namespace {

constexpr char kMagic[] = "CRJS7";  // 2: outside uid/gid; 3: cleanup commands; 4: hidden and idmapped mounts;
                                    // 5: hold and enter modes; 6: contained mode; 7: cleanup unless exited
// A spec is a few KiB; this bound stops a corrupt length from allocating gigabytes.
constexpr std::uint32_t kMaxField = 16u * 1024 * 1024;

class writer {
public:
  void u32(std::uint32_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void u64(std::uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void boolean(bool v) { u32(v ? 1 : 0); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  void strs(const std::vector<std::string>& v) {
    u32(static_cast<std::uint32_t>(v.size()));
    for (auto& s : v) str(s);
  }
  std::string take() { return std::move(out_); }
  void raw(const char* p, std::size_t n) { out_.append(p, n); }

private:
  std::string out_;
};

class reader {
public:
  explicit reader(const std::string& in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }

  std::uint32_t u32() { return fixed<std::uint32_t>(); }
  std::uint64_t u64() { return fixed<std::uint64_t>(); }
  bool boolean() { return u32() != 0; }
  std::string str() {
    auto n = u32();
    if (!ok_ || n > kMaxField || n > in_.size() - pos_) return fail<std::string>();
    std::string s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<std::string> strs() {
    auto n = u32();
    std::vector<std::string> v;
    if (!ok_ || n > kMaxField) return fail<std::vector<std::string>>();
    for (std::uint32_t i = 0; i < n && ok_; ++i) v.push_back(str());
    return v;
  }
  bool magic(const char* m) {
    auto n = std::strlen(m);
    if (in_.size() - pos_ < n || in_.compare(pos_, n, m) != 0) return ok_ = false;
    pos_ += n;
    return true;
  }

private:
  template <class T>
  T fail() {
    ok_ = false;
    return T{};
  }
  template <class T>
  T fixed() {
    if (!ok_ || in_.size() - pos_ < sizeof(T)) return fail<T>();
    T v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }

  const std::string& in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

} // namespace

std::string serialize(const jail_spec& s) {
  writer w;
  w.raw(kMagic, sizeof kMagic - 1);
  w.u32(static_cast<std::uint32_t>(s.mode));
  w.str(s.program);
  w.strs(s.argv);
  w.strs(s.envp);
  w.str(s.cwd);
  w.u32(s.kill_grace_ms);
  w.boolean(s.controlling_tty);
  w.u32(static_cast<std::uint32_t>(s.cleanup.size()));
  for (auto& c : s.cleanup) w.strs(c);
  w.u32(static_cast<std::uint32_t>(s.cleanup_unless_exited.size()));
  for (auto& c : s.cleanup_unless_exited) w.strs(c);
  w.boolean(s.share_network);
  w.str(s.hostname);
  w.u32(static_cast<std::uint32_t>(s.mounts.size()));
  for (auto& m : s.mounts) {
    w.u32(static_cast<std::uint32_t>(m.kind));
    w.str(m.source);
    w.str(m.target);
    w.u64(m.size_bytes);
    w.boolean(m.optional);
    w.boolean(m.idmapped);
    w.u32(m.owner_uid);
    w.u32(m.owner_gid);
  }
  w.u32(static_cast<std::uint32_t>(s.rlimits.size()));
  for (auto& r : s.rlimits) {
    w.u32(static_cast<std::uint32_t>(r.resource));
    w.u64(r.soft);
    w.u64(r.hard);
  }
  w.strs(s.cgroup_procs);
  w.u32(s.landlock_abi_floor);
  w.u32(static_cast<std::uint32_t>(s.landlock_rules.size()));
  for (auto& r : s.landlock_rules) {
    w.str(r.path);
    w.boolean(r.writable);
    w.boolean(r.list_only);
  }
  w.boolean(s.landlock_deny_tcp);
  w.boolean(s.landlock_scope);
  w.boolean(s.seccomp_kill);
  w.u32(static_cast<std::uint32_t>(s.seccomp));
  w.u32(static_cast<std::uint32_t>(s.egress_ports.size()));
  for (auto port : s.egress_ports) w.u32(port);
  w.u32(s.uid_inside);
  w.u32(s.gid_inside);
  w.u32(s.uid_outside);
  w.u32(s.gid_outside);
  w.u64(static_cast<std::uint64_t>(s.enter_pid));
  w.u64(s.enter_start_time);
  w.boolean(s.leave_running);
  w.u64(s.process_budget);
  return w.take();
}

expected<jail_spec> parse_jail_spec(const std::string& bytes) {
  reader r(bytes);
  jail_spec s;
  if (!r.magic(kMagic))
    return make_failure(failure_kind::internal, "jail spec: bad magic (runtime and helper versions differ?)");
  auto mode = r.u32();
  if (mode > 4) return make_failure(failure_kind::internal, "jail spec: unknown mode");
  s.mode = static_cast<jail_mode>(mode);
  s.program = r.str();
  s.argv = r.strs();
  s.envp = r.strs();
  s.cwd = r.str();
  s.kill_grace_ms = r.u32();
  s.controlling_tty = r.boolean();
  auto ncleanup = r.u32();
  for (std::uint32_t i = 0; i < ncleanup && r.ok() && i < kMaxField; ++i) s.cleanup.push_back(r.strs());
  auto nunless = r.u32();
  for (std::uint32_t i = 0; i < nunless && r.ok() && i < kMaxField; ++i) s.cleanup_unless_exited.push_back(r.strs());
  s.share_network = r.boolean();
  s.hostname = r.str();
  auto nmounts = r.u32();
  for (std::uint32_t i = 0; i < nmounts && r.ok() && i < kMaxField; ++i) {
    mount_entry m;
    auto kind = r.u32();
    if (kind > 5) return make_failure(failure_kind::internal, "jail spec: unknown mount kind");
    m.kind = static_cast<mount_kind>(kind);
    m.source = r.str();
    m.target = r.str();
    m.size_bytes = r.u64();
    m.optional = r.boolean();
    m.idmapped = r.boolean();
    m.owner_uid = r.u32();
    m.owner_gid = r.u32();
    s.mounts.push_back(std::move(m));
  }
  auto nrl = r.u32();
  for (std::uint32_t i = 0; i < nrl && r.ok() && i < kMaxField; ++i) {
    rlimit_entry e;
    e.resource = static_cast<int>(r.u32());
    e.soft = r.u64();
    e.hard = r.u64();
    s.rlimits.push_back(e);
  }
  s.cgroup_procs = r.strs();
  s.landlock_abi_floor = r.u32();
  auto nrules = r.u32();
  for (std::uint32_t i = 0; i < nrules && r.ok() && i < kMaxField; ++i) {
    landlock_rule rule;
    rule.path = r.str();
    rule.writable = r.boolean();
    rule.list_only = r.boolean();
    s.landlock_rules.push_back(std::move(rule));
  }
  s.landlock_deny_tcp = r.boolean();
  s.landlock_scope = r.boolean();
  s.seccomp_kill = r.boolean();
  auto variant = r.u32();
  if (variant > 3) return make_failure(failure_kind::internal, "jail spec: unknown seccomp variant");
  s.seccomp = static_cast<seccomp_variant>(variant);
  auto nports = r.u32();
  for (std::uint32_t i = 0; i < nports && r.ok() && i < 16; ++i) {
    auto port = r.u32();
    if (port == 0 || port > 65535) return make_failure(failure_kind::internal, "jail spec: bad egress port");
    s.egress_ports.push_back(static_cast<std::uint16_t>(port));
  }
  if (nports > 16) return make_failure(failure_kind::internal, "jail spec: too many egress ports");
  s.uid_inside = r.u32();
  s.gid_inside = r.u32();
  s.uid_outside = r.u32();
  s.gid_outside = r.u32();
  s.enter_pid = static_cast<std::int64_t>(r.u64());
  s.enter_start_time = r.u64();
  s.leave_running = r.boolean();
  s.process_budget = r.u64();
  if (s.mode == jail_mode::enter && (s.enter_pid <= 0 || s.enter_start_time == 0))
    return make_failure(failure_kind::internal, "jail spec: enter mode without the holder's pid and start time");
  if (!r.ok() || !r.at_end())
    return make_failure(failure_kind::internal, "jail spec: truncated or trailing bytes");
  if (s.argv.empty() || s.program.empty())
    return make_failure(failure_kind::invalid_request, "jail spec: empty program or argv");
  return s;
}

std::string spec_frame(const std::string& serialized) {
  auto n = static_cast<std::uint32_t>(serialized.size());
  std::string out(reinterpret_cast<const char*>(&n), sizeof n);
  return out + serialized;
}

void apply_launch(jail_spec& armed, const jail_spec& launch) {
  armed.program = launch.program;
  armed.argv = launch.argv;
  armed.envp = launch.envp;
  armed.cwd = launch.cwd;
  armed.kill_grace_ms = launch.kill_grace_ms;
}

bool same_boundary(const jail_spec& a, const jail_spec& b) {
  // Serialized with the launch fields made equal: any other difference, in any field added
  // later too, shows up in the bytes.
  jail_spec x = a;
  apply_launch(x, b);
  return serialize(x) == serialize(b);
}

} // namespace corral
