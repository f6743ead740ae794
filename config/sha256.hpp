// SHA-256 over bytes that arrive in pieces (OpenSSL's EVP, its libcrypto opened on the
// first digest), as lower-case hex: the digest of workspace files, snapshot archives,
// profile descriptors and MCP tool pins.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace corral {

class sha256_hasher {
public:
  sha256_hasher();
  ~sha256_hasher();
  sha256_hasher(sha256_hasher&&) noexcept;
  sha256_hasher& operator=(sha256_hasher&&) noexcept;

  // False when OpenSSL failed (it does not for SHA-256 short of memory) or its libcrypto
  // could not be opened (said once on stderr).
  bool update(const void* data, std::size_t n);
  bool update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
  // 64 hex digits, or "" when OpenSSL failed; the hasher is spent after it.
  std::string hex_digest();

private:
  struct context;
  std::unique_ptr<context> ctx_;
};

// The digest of bytes held whole.
std::string sha256_hex(std::string_view bytes);

// The digest of what is left to read on a descriptor, read to its end; "" with errno set
// when a read failed (or OpenSSL did, errno 0).
std::string sha256_of_descriptor(int fd);

} // namespace corral
