#include "proto/nodes/node_tls.hpp"

#include <chrono>
#include <memory>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include "proto/nodes/node_messages.hpp"
#include "proto/nodes/tls_error_queue.hpp"

namespace corral {

namespace {

std::string openssl_error() {
  std::string out;
  while (auto code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "no detail from OpenSSL" : out;
}

// OpenSSL hands a passphrase callback 1024 bytes, and CAF's own callback copies at most
// 1023 of them: a longer passphrase would pass the check here and fail in CAF.
constexpr std::size_t kMaxPassphrase = 1023;

int passphrase_callback(char* buf, int size, int, void* user) {
  const auto* pass = static_cast<const std::string*>(user);
  if (pass->empty()) return -1;  // OpenSSL's default would ask on the terminal
  int n = static_cast<int>(std::min<std::size_t>(pass->size(), static_cast<std::size_t>(size)));
  std::copy_n(pass->data(), n, buf);
  return n;
}

failure tls_failure(const std::string& what) {
  return make_failure(failure_kind::config_error,
                      what + " (a node connection needs --node-cert, --node-key and --node-ca: PEM files of a "
                             "certificate, its key and the CA that signs every node and caller)");
}

} // namespace

status check_node_tls(const node_tls& tls) {
  for (auto [name, path] : {std::pair{"certificate", &tls.certificate}, std::pair{"key", &tls.key},
                            std::pair{"CA file", &tls.ca_file}}) {
    if (path->empty()) return tls_failure(std::string("no TLS ") + name + " given");
    if (::access(path->c_str(), R_OK) != 0) return tls_failure(std::string("the TLS ") + name + " " + *path + " is not readable");
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) return make_failure(failure_kind::internal, "SSL_CTX_new: " + openssl_error());
  SSL_CTX_set_default_passwd_cb(ctx.get(), passphrase_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), const_cast<std::string*>(&tls.passphrase));
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.certificate.c_str()) != 1)
    return tls_failure("the certificate " + tls.certificate + " does not load: " + openssl_error());
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1)
    return tls_failure("the key " + tls.key + " does not load or does not belong to the certificate " +
                       tls.certificate + (tls.passphrase.empty()
                                              ? " (an encrypted key needs --node-key-passphrase-file)"
                                              : " (or the passphrase is not the key's)") +
                       ": " + openssl_error());
  if (SSL_CTX_check_private_key(ctx.get()) != 1)
    return tls_failure("the key " + tls.key + " does not belong to the certificate " + tls.certificate);
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1)
    return tls_failure("the CA file " + tls.ca_file + " does not load: " + openssl_error());
  return ok();
}

expected<std::string> read_passphrase_file(const std::string& path) {
  auto refuse = [&](const std::string& why) {
    return make_failure(failure_kind::config_error, "the passphrase file " + path + " " + why);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return refuse(std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  std::string text;
  std::optional<failure> bad;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    bad = refuse("is not a regular file");
  } else if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    bad = refuse(std::string("can be read or written by other users (mode ") + mode + "): chmod 600 it");
  } else {
    char buf[4097];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() <= kMaxPassphrase + 2)
      text.append(buf, static_cast<std::size_t>(n));
    if (n < 0) bad = refuse(std::string("cannot be read: ") + std::strerror(errno));
  }
  ::close(fd);
  if (bad) return *bad;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  if (text.size() > kMaxPassphrase) return refuse("is longer than " + std::to_string(kMaxPassphrase) + " bytes");
  if (text.empty()) return refuse("is empty");
  if (text.find('\0') != std::string::npos || text.find('\n') != std::string::npos)
    return refuse("holds a NUL byte or more than one line");
  return text;
}

void configure_node_network(caf::actor_system_config& cfg, const node_tls& tls) {
  if (!tls_error_queue_repaired())
    spdlog::warn("the OpenSSL error-queue repair is not in effect: one failed node connection may close others");
  cfg.load<caf::io::middleman>();
  cfg.load<caf::openssl::manager>();
  cfg.openssl_certificate = tls.certificate;
  cfg.openssl_key = tls.key;
  cfg.openssl_cafile = tls.ca_file;
  cfg.openssl_passphrase = tls.passphrase;
  // Without heartbeats a peer that vanished without a FIN or RST (a power cut, a
  // partition) would hold its executions' callers forever.
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::seconds(1)});
  cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::seconds(10)});
  add_node_message_types(cfg);
}

} // namespace corral
