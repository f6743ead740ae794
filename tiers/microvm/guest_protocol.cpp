#include "tiers/microvm/guest_protocol.hpp"

#include <cstring>

namespace corral {

namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_str(std::string& out, const std::string& s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}

void put_strs(std::string& out, const std::vector<std::string>& v) {
  put_u32(out, static_cast<std::uint32_t>(v.size()));
  for (auto& s : v) put_str(out, s);
}

// Reads what the put_* functions wrote; any short read marks it failed and returns zeros,
// so a decoder checks ok() once at the end.
class field_reader {
public:
  explicit field_reader(const std::string& in) : in_(in) {}
  bool ok() const { return ok_ && pos_ == in_.size(); }  // all read, nothing left over
  bool good() const { return ok_; }                      // nothing short so far

  std::uint64_t uint(int bytes) {
    if (!take(static_cast<std::size_t>(bytes))) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in_[pos_ - bytes + i])) << (8 * i);
    return v;
  }
  std::string str() {
    auto n = static_cast<std::size_t>(uint(4));
    if (!take(n)) return "";
    return in_.substr(pos_ - n, n);
  }
  std::vector<std::string> strs() {
    auto n = static_cast<std::size_t>(uint(4));
    std::vector<std::string> v;
    // Each string costs at least its 4-byte length: a count beyond that is corrupt.
    if (n > (in_.size() - pos_) / 4) {
      ok_ = false;
      return v;
    }
    for (std::size_t i = 0; i < n && ok_; ++i) v.push_back(str());
    return v;
  }

private:
  bool take(std::size_t n) {
    if (!ok_ || in_.size() - pos_ < n) {
      ok_ = false;
      return false;
    }
    pos_ += n;
    return true;
  }
  const std::string& in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

bool known_type(std::uint8_t t) {
  switch (static_cast<frame_type>(t)) {
    case frame_type::ready: case frame_type::out: case frame_type::err: case frame_type::exit:
    case frame_type::fatal: case frame_type::request: case frame_type::input: case frame_type::input_end:
    case frame_type::written: case frame_type::removed: case frame_type::resize:
      return true;
  }
  return false;
}

void put_file(std::string& out, const guest_file& f) {
  put_u32(out, f.tree);
  put_str(out, f.path);
  out.push_back(static_cast<char>(f.kind));
  put_u32(out, f.mode);
  put_u64(out, f.offset);
  put_str(out, f.content);
}

guest_file take_file(field_reader& in) {
  guest_file f;
  f.tree = static_cast<std::uint32_t>(in.uint(4));
  f.path = in.str();
  f.kind = static_cast<entry_kind>(in.uint(1));
  f.mode = static_cast<std::uint32_t>(in.uint(4));
  f.offset = in.uint(8);
  f.content = in.str();
  return f;
}

bool known_kind(entry_kind k) {
  return k == entry_kind::file || k == entry_kind::directory || k == entry_kind::symlink;
}

} // namespace

bool safe_relative_path(const std::string& path) {
  if (path.empty() || path.size() > 4096 || path.find('\0') != std::string::npos) return false;
  std::size_t start = 0;
  for (;;) {
    auto end = path.find('/', start);
    auto part = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.empty() || part == "." || part == ".." || part.size() > 255) return false;
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

bool safe_guest_path(const std::string& path) {
  return path.size() > 1 && path.front() == '/' && safe_relative_path(path.substr(1));
}

std::string encode_frame(frame_type type, const std::string& payload) {
  std::string out;
  out.reserve(5 + payload.size());
  out.push_back(static_cast<char>(type));
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  out += payload;
  return out;
}

expected<std::optional<frame>> frame_reader::next() {
  if (buffer_.size() < 5) return std::optional<frame>{};
  auto type = static_cast<std::uint8_t>(buffer_[0]);
  if (!known_type(type))
    return make_failure(failure_kind::internal, "the guest channel carried an unknown frame type " +
                                                    std::to_string(type) + " (a corrupted stream?)");
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer_[1 + i])) << (8 * i);
  if (size > kMaxFramePayload)
    return make_failure(failure_kind::internal, "the guest channel announced a frame of " + std::to_string(size) +
                                                    " bytes, over the bound of " + std::to_string(kMaxFramePayload));
  if (buffer_.size() < 5 + static_cast<std::size_t>(size)) return std::optional<frame>{};
  frame f{static_cast<frame_type>(type), buffer_.substr(5, size)};
  buffer_.erase(0, 5 + static_cast<std::size_t>(size));
  return std::optional<frame>{std::move(f)};
}

std::string encode_request(const guest_request& r) {
  std::string out;
  put_strs(out, r.argv);
  put_strs(out, r.envp);
  put_str(out, r.cwd);
  put_u64(out, r.timeout_ms);
  put_u64(out, r.memory_bytes);
  put_u64(out, r.pids);
  put_u64(out, r.cpu_millicores);
  put_u32(out, r.kill_grace_ms);
  put_u32(out, static_cast<std::uint32_t>(r.trees.size()));
  for (auto& t : r.trees) {
    put_str(out, t.path);
    out.push_back(t.writable ? 1 : 0);
  }
  put_u32(out, static_cast<std::uint32_t>(r.files.size()));
  for (auto& f : r.files) put_file(out, f);
  out.push_back(r.tty ? 1 : 0);
  put_u32(out, r.rows);
  put_u32(out, r.cols);
  return out;
}

expected<guest_request> decode_request(const std::string& payload) {
  field_reader in(payload);
  guest_request r;
  r.argv = in.strs();
  r.envp = in.strs();
  r.cwd = in.str();
  r.timeout_ms = in.uint(8);
  r.memory_bytes = in.uint(8);
  r.pids = in.uint(8);
  r.cpu_millicores = in.uint(8);
  r.kill_grace_ms = static_cast<std::uint32_t>(in.uint(4));
  auto trees = static_cast<std::size_t>(in.uint(4));
  for (std::size_t i = 0; i < trees && i < 256 && in.good(); ++i) {
    guest_tree t;
    t.path = in.str();
    t.writable = in.uint(1) != 0;
    r.trees.push_back(std::move(t));
  }
  auto files = static_cast<std::size_t>(in.uint(4));
  for (std::size_t i = 0; i < files && i < kMaxTreeEntries && in.good(); ++i) r.files.push_back(take_file(in));
  r.tty = in.uint(1) != 0;
  r.rows = static_cast<std::uint16_t>(in.uint(4));
  r.cols = static_cast<std::uint16_t>(in.uint(4));
  if (!in.ok() || trees != r.trees.size() || files != r.files.size())
    return make_failure(failure_kind::invalid_request, "malformed guest request frame");
  if (r.argv.empty()) return make_failure(failure_kind::invalid_request, "the guest request has an empty argv");
  for (auto& t : r.trees)
    if (!safe_guest_path(t.path))
      return make_failure(failure_kind::invalid_request, "the guest request names an unsafe tree path '" + t.path + "'");
  for (auto& f : r.files)
    if (f.tree >= r.trees.size() || !safe_relative_path(f.path) || !known_kind(f.kind))
      return make_failure(failure_kind::invalid_request, "the guest request has an unsafe entry '" + f.path + "'");
  return r;
}

std::string encode_window(std::uint16_t rows, std::uint16_t cols) {
  std::string out;
  put_u32(out, rows);
  put_u32(out, cols);
  return out;
}

expected<std::pair<std::uint16_t, std::uint16_t>> decode_window(const std::string& payload) {
  field_reader in(payload);
  auto rows = in.uint(4), cols = in.uint(4);
  if (!in.ok() || rows > 0xffff || cols > 0xffff) return make_failure(failure_kind::invalid_request, "malformed resize frame");
  return std::pair<std::uint16_t, std::uint16_t>(static_cast<std::uint16_t>(rows), static_cast<std::uint16_t>(cols));
}

std::string encode_file(const guest_file& f) {
  std::string out;
  put_file(out, f);
  return out;
}

expected<guest_file> decode_file(const std::string& payload) {
  field_reader in(payload);
  auto f = take_file(in);
  if (!in.ok() || !known_kind(f.kind))
    return make_failure(failure_kind::internal, "malformed tree entry frame from the guest agent");
  return f;
}

std::string encode_exit(const guest_exit& e) {
  std::string out;
  out.push_back(e.signaled ? 1 : 0);
  put_u32(out, static_cast<std::uint32_t>(e.code));
  out.push_back(e.timed_out ? 1 : 0);
  out.push_back(e.oom_killed ? 1 : 0);
  return out;
}

expected<guest_exit> decode_exit(const std::string& payload) {
  field_reader in(payload);
  guest_exit e;
  e.signaled = in.uint(1) != 0;
  e.code = static_cast<std::int32_t>(in.uint(4));
  e.timed_out = in.uint(1) != 0;
  e.oom_killed = in.uint(1) != 0;
  if (!in.ok()) return make_failure(failure_kind::internal, "malformed exit frame from the guest agent");
  return e;
}

} // namespace corral
