// The wire protocol between corral-microvm (the host-side launcher) and the guest agent
// (the VM's /init), carried over a virtio-serial port named kChannelPortName (QEMU's
// stdin/stdout on the host; stdin/stdout with the agent's --channel-stdio).
//
// The port is a plain byte stream, so everything is framed: one type byte, a
// little-endian u32 payload length, the payload. Before its first frame the agent writes
// kAgentMarker once, so the launcher can skip anything that came before it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/failure.hpp"

namespace corral {

inline constexpr char kAgentMarker[] = "\n#corral-agent-v1#\n";
inline constexpr char kChannelPortName[] = "corral";
// A frame's payload is at most this: big enough for a request with a large environment,
// small enough that a corrupt length cannot make either side allocate without bound.
inline constexpr std::uint32_t kMaxFramePayload = 16u << 20;
// Output and stdin travel in chunks of at most this many bytes.
inline constexpr std::size_t kChunkBytes = 4096;

enum class frame_type : std::uint8_t {
  // guest -> host
  ready = 'R',   // the agent is up and waits for the request
  out = 'O',     // a chunk of the program's stdout
  err = 'E',     // a chunk of the program's stderr
  exit = 'X',    // the program ended (payload: guest_exit); nothing follows
  written = 'B',  // an entry of a writable tree, new or changed (payload: guest_file)
  removed = 'D',  // an entry of a writable tree the program removed (payload: guest_file)
  fatal = 'F',   // the agent could not run the program (payload: the reason)
  // host -> guest
  request = 'Q',    // what to run (payload: guest_request)
  input = 'I',      // a chunk of stdin
  input_end = 'Z',  // stdin reached EOF
  resize = 'W',     // a terminal request's new window size (payload: window_size)
};

struct frame {
  frame_type type = frame_type::fatal;
  std::string payload;
};

// A host directory copied into the guest: the execution's scratch dir (the working
// directory), the profile's source roots (read-only there) and output roots (writable;
// what the program leaves in them travels back as `written` and `removed` frames).
struct guest_tree {
  std::string path;  // absolute in the guest
  bool writable = false;
};

enum class entry_kind : std::uint8_t { file = 'f', directory = 'd', symlink = 'l' };

// One entry of a tree. A file larger than a frame travels as several, each with its
// offset; offset 0 starts the file over.
struct guest_file {
  std::uint32_t tree = 0;  // index into guest_request::trees
  std::string path;        // relative to the tree: see safe_relative_path
  entry_kind kind = entry_kind::file;
  std::uint32_t mode = 0644;
  std::uint64_t offset = 0;
  std::string content;     // a file's bytes, or a symlink's target
};

// Copy-in bounds: the whole request is one frame, and every byte is held in the guest's RAM.
inline constexpr std::size_t kMaxTreeEntries = 4096;
inline constexpr std::uint64_t kMaxTreeBytes = 12ull << 20;
// A `written` frame carries at most this much of a file.
inline constexpr std::size_t kWriteBackChunk = 1u << 20;

// A path inside a tree: relative, '/'-separated, no empty, "." or ".." component, no NUL.
bool safe_relative_path(const std::string& path);
// A guest mount point for a tree: absolute, the same rules below "/", not "/" itself.
bool safe_guest_path(const std::string& path);

// What the guest runs. Limits of 0 mean "not set".
struct guest_request {
  std::vector<std::string> argv;  // argv[0] is the program's path inside the guest
  std::vector<std::string> envp;  // KEY=value, the program's whole environment
  std::string cwd;
  std::uint64_t timeout_ms = 0;       // the agent kills the program at this deadline
  std::uint64_t memory_bytes = 0;     // the guest cgroup's memory.max
  std::uint64_t pids = 0;             // the guest cgroup's pids.max
  std::uint64_t cpu_millicores = 0;   // the guest cgroup's cpu.max quota per 100 ms period
  std::uint32_t kill_grace_ms = 200;  // SIGTERM, then SIGKILL after this
  std::vector<guest_tree> trees;
  std::vector<guest_file> files;      // the trees' contents, parents before children
  // A terminal session: the program gets a pty in the guest (stdout and stderr both are
  // its output) of this size, resized by `resize` frames.
  bool tty = false;
  std::uint16_t rows = 24, cols = 80;
};

struct guest_exit {
  bool signaled = false;
  std::int32_t code = 0;  // the exit status, or the signal when signaled
  bool timed_out = false;
  bool oom_killed = false;  // the guest cgroup saw an OOM kill
};

std::string encode_frame(frame_type type, const std::string& payload);

// Accumulates bytes from the channel and hands out complete frames.
class frame_reader {
public:
  void feed(const char* data, std::size_t size) { buffer_.append(data, size); }
  // The next complete frame, nothing when more bytes are needed, or a failure when the
  // stream cannot be a frame (a length over the bound, an unknown type).
  expected<std::optional<frame>> next();
  std::size_t buffered() const { return buffer_.size(); }

private:
  std::string buffer_;
};

std::string encode_request(const guest_request& request);
expected<guest_request> decode_request(const std::string& payload);
std::string encode_window(std::uint16_t rows, std::uint16_t cols);
expected<std::pair<std::uint16_t, std::uint16_t>> decode_window(const std::string& payload);
std::string encode_file(const guest_file& file);
expected<guest_file> decode_file(const std::string& payload);
std::string encode_exit(const guest_exit& exit);
expected<guest_exit> decode_exit(const std::string& payload);

} // namespace corral
