#include "config/sha256.hpp"

#include <cerrno>
#include <unistd.h>
#include <vector>

#include <openssl/evp.h>

namespace corral {

struct sha256_hasher::context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool good = md != nullptr && EVP_DigestInit_ex(md, EVP_sha256(), nullptr) == 1;
  ~context() { EVP_MD_CTX_free(md); }
};

sha256_hasher::sha256_hasher() : ctx_(std::make_unique<context>()) {}
sha256_hasher::~sha256_hasher() = default;
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;

bool sha256_hasher::update(const void* data, std::size_t n) {
  ctx_->good = ctx_->good && EVP_DigestUpdate(ctx_->md, data, n) == 1;
  return ctx_->good;
}

std::string sha256_hasher::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx_->good || EVP_DigestFinal_ex(ctx_->md, md, &len) != 1) return "";
  ctx_->good = false;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned i = 0; i < len; ++i) {
    hex += kHex[md[i] >> 4];
    hex += kHex[md[i] & 15];
  }
  return hex;
}

std::string sha256_of_descriptor(int fd) {
  sha256_hasher hasher;
  std::vector<char> buffer(256 * 1024);
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return "";
    if (n == 0) break;
    if (!hasher.update(buffer.data(), static_cast<std::size_t>(n))) {
      errno = 0;
      return "";
    }
  }
  errno = 0;
  return hasher.hex_digest();
}

std::string sha256_hex(std::string_view bytes) {
  sha256_hasher h;
  h.update(bytes);
  return h.hex_digest();
}

} // namespace corral
