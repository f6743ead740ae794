// A zstd frame written to, or read from, a descriptor as the bytes go, in bounded memory:
// a snapshot's archive never has to fit in memory. The writer hashes what it writes, so
// an archive's digest costs no second pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/failure.hpp"
#include "config/sha256.hpp"

namespace corral {

struct compressed_file {
  std::uint64_t bytes = 0;  // written to the descriptor
  std::string sha256;       // of those bytes, hex
};

class zstd_writer {
public:
  // fd stays the caller's; level as zstd's (3 is its default).
  explicit zstd_writer(int fd, int level = 3);
  ~zstd_writer();
  zstd_writer(const zstd_writer&) = delete;
  zstd_writer& operator=(const zstd_writer&) = delete;

  status write(std::string_view bytes);
  // Ends the frame and flushes it.
  expected<compressed_file> finish();

private:
  status drain(std::string_view in, bool end);

  struct state;
  std::unique_ptr<state> st_;
};

class zstd_reader {
public:
  explicit zstd_reader(int fd);
  ~zstd_reader();
  zstd_reader(const zstd_reader&) = delete;
  zstd_reader& operator=(const zstd_reader&) = delete;

  // Exactly n bytes of the decompressed stream; fails at its end or at damage.
  status read_exact(char* out, std::size_t n);
  // True when the frame is complete and nothing follows it.
  expected<bool> at_end();

private:
  status refill();

  struct state;
  std::unique_ptr<state> st_;
};

} // namespace corral
