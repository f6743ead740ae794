#include "config/sha256.hpp"

#include <cerrno>
#include <cstdio>
#include <dlfcn.h>
#include <unistd.h>
#include <vector>

#include <openssl/evp.h>
#include <openssl/opensslv.h>

namespace corral {

namespace {

#define CORRAL_STRINGIFY_(x) #x
#define CORRAL_STRINGIFY(x) CORRAL_STRINGIFY_(x)

// OpenSSL's libcrypto is opened on the first digest, not linked: most starts of the CLI
// (`corral run`) never hash, and loading it (21k relocations, its constructors) cost them
// about 2 ms (issue 17). The soname is the one of the headers built against.
constexpr const char* kLibcrypto = "libcrypto.so." CORRAL_STRINGIFY(OPENSSL_SHLIB_VERSION);

struct libcrypto_digest {
  EVP_MD_CTX* (*ctx_new)() = nullptr;
  void (*ctx_free)(EVP_MD_CTX*) = nullptr;
  const EVP_MD* (*sha256)() = nullptr;
  int (*init)(EVP_MD_CTX*, const EVP_MD*, ENGINE*) = nullptr;
  int (*update)(EVP_MD_CTX*, const void*, size_t) = nullptr;
  int (*final)(EVP_MD_CTX*, unsigned char*, unsigned int*) = nullptr;
};

template <class Fn>
bool bind(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(::dlsym(lib, name));
  return out != nullptr;
}

// Null when libcrypto cannot be opened; then why is said once on stderr, and every
// digest is "" (the callers' failure).
const libcrypto_digest* libcrypto() {
  static const libcrypto_digest* api = []() -> const libcrypto_digest* {
    // Never closed: the digests may be taken until the process ends.
    void* lib = ::dlopen(kLibcrypto, RTLD_NOW | RTLD_LOCAL);
    static libcrypto_digest d;
    if (lib && bind(lib, "EVP_MD_CTX_new", d.ctx_new) && bind(lib, "EVP_MD_CTX_free", d.ctx_free) &&
        bind(lib, "EVP_sha256", d.sha256) && bind(lib, "EVP_DigestInit_ex", d.init) &&
        bind(lib, "EVP_DigestUpdate", d.update) && bind(lib, "EVP_DigestFinal_ex", d.final))
      return &d;
    const char* why = ::dlerror();
    std::fprintf(stderr, "corral: SHA-256 is unavailable: %s (%s; install Debian's libssl3)\n", kLibcrypto,
                 why ? why : "a symbol is missing");
    return nullptr;
  }();
  return api;
}

} // namespace

struct sha256_hasher::context {
  const libcrypto_digest* api = libcrypto();
  EVP_MD_CTX* md = api ? api->ctx_new() : nullptr;
  bool good = md != nullptr && api->init(md, api->sha256(), nullptr) == 1;
  ~context() {
    if (md) api->ctx_free(md);
  }
};

sha256_hasher::sha256_hasher() : ctx_(std::make_unique<context>()) {}
sha256_hasher::~sha256_hasher() = default;
sha256_hasher::sha256_hasher(sha256_hasher&&) noexcept = default;
sha256_hasher& sha256_hasher::operator=(sha256_hasher&&) noexcept = default;

bool sha256_hasher::update(const void* data, std::size_t n) {
  ctx_->good = ctx_->good && ctx_->api->update(ctx_->md, data, n) == 1;
  return ctx_->good;
}

std::string sha256_hasher::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx_->good || ctx_->api->final(ctx_->md, md, &len) != 1) return "";
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
