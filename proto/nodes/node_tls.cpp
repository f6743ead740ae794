#include "proto/nodes/node_tls.hpp"

#include <chrono>
#include <memory>
#include <algorithm>

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
