#include "tiers/workspace/zstd_stream.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <vector>
#include <zstd.h>

#include "config/write_all.hpp"

namespace corral {

namespace {

failure zstd_failure(const char* what, std::size_t code) {
  return make_failure(failure_kind::internal, std::string("zstd ") + what + ": " + ZSTD_getErrorName(code));
}

} // namespace

struct zstd_writer::state {
  int fd;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<char> out = std::vector<char>(ZSTD_CStreamOutSize());
  sha256_hasher hasher;
  std::uint64_t written = 0;
  ~state() { ZSTD_freeCCtx(cctx); }
};

zstd_writer::zstd_writer(int fd, int level) : st_(std::make_unique<state>()) {
  st_->fd = fd;
  if (st_->cctx) ZSTD_CCtx_setParameter(st_->cctx, ZSTD_c_compressionLevel, level);
}

zstd_writer::~zstd_writer() = default;

status zstd_writer::drain(std::string_view bytes, bool end) {
  if (!st_->cctx) return make_failure(failure_kind::internal, "zstd: out of memory");
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  for (;;) {
    ZSTD_outBuffer out{st_->out.data(), st_->out.size(), 0};
    std::size_t left = ZSTD_compressStream2(st_->cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(left)) return zstd_failure("compressing", left);
    if (out.pos > 0) {
      if (!write_all(st_->fd, std::string_view(st_->out.data(), out.pos)))
        return make_failure(failure_kind::internal, std::string("writing the archive: ") + std::strerror(errno));
      st_->hasher.update(st_->out.data(), out.pos);
      st_->written += out.pos;
    }
    bool done = end ? left == 0 : in.pos == in.size;
    if (done) return ok();
  }
}

status zstd_writer::write(std::string_view bytes) { return drain(bytes, false); }

expected<compressed_file> zstd_writer::finish() {
  if (auto s = drain({}, true); !s) return s.error();
  compressed_file f;
  f.bytes = st_->written;
  f.sha256 = st_->hasher.hex_digest();
  if (f.sha256.empty()) return make_failure(failure_kind::internal, "hashing the archive failed");
  return f;
}

struct zstd_reader::state {
  int fd;
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::vector<char> in = std::vector<char>(ZSTD_DStreamInSize());
  ZSTD_inBuffer input{nullptr, 0, 0};
  std::size_t frame_left = 1;  // ZSTD_decompressStream's hint: 0 once a frame is complete
  bool eof = false;
  ~state() { ZSTD_freeDCtx(dctx); }
};

zstd_reader::zstd_reader(int fd) : st_(std::make_unique<state>()) {
  st_->fd = fd;
  st_->input.src = st_->in.data();
}

zstd_reader::~zstd_reader() = default;

status zstd_reader::refill() {
  for (;;) {
    ssize_t n = ::read(st_->fd, st_->in.data(), st_->in.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_failure(failure_kind::internal, std::string("reading the archive: ") + std::strerror(errno));
    st_->input = ZSTD_inBuffer{st_->in.data(), static_cast<std::size_t>(n), 0};
    st_->eof = n == 0;
    return ok();
  }
}

status zstd_reader::read_exact(char* out, std::size_t n) {
  if (!st_->dctx) return make_failure(failure_kind::internal, "zstd: out of memory");
  ZSTD_outBuffer output{out, n, 0};
  while (output.pos < n) {
    if (st_->input.pos == st_->input.size) {
      if (auto s = refill(); !s) return s;
      if (st_->eof) return make_failure(failure_kind::invalid_request, "snapshot archive: it ends early");
    }
    std::size_t hint = ZSTD_decompressStream(st_->dctx, &output, &st_->input);
    if (ZSTD_isError(hint)) return make_failure(failure_kind::invalid_request, std::string("snapshot archive: ") + ZSTD_getErrorName(hint));
    st_->frame_left = hint;
  }
  return ok();
}

expected<bool> zstd_reader::at_end() {
  if (st_->frame_left != 0) return false;
  if (st_->input.pos < st_->input.size) return false;
  if (auto s = refill(); !s) return s.error();
  return st_->eof;
}

} // namespace corral
