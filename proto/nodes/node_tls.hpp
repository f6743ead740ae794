// The credentials of one end of a node connection, and the actor system setup that puts
// CAF's middleman behind TLS with them. Both ends present a certificate and verify the
// other's against `ca_file` (CAF's OpenSSL module requires peer certificates on both
// sides once credentials are configured). CAF checks the chain only, not host names: the
// CA must be one that signs corral nodes and their callers and nothing else.
#pragma once

#include <string>

#include <caf/actor_system_config.hpp>

#include "config/failure.hpp"

namespace corral {

struct node_tls {
  std::string certificate;  // PEM: this end's certificate (chain)
  std::string key;          // PEM: its private key
  std::string ca_file;      // PEM: the CA the peer's certificate must chain to
  std::string passphrase;   // of an encrypted key, else empty (read_passphrase_file)

  // Nothing given: a command that only uses these with a node flag refuses them otherwise.
  bool empty() const { return certificate.empty() && key.empty() && ca_file.empty() && passphrase.empty(); }
};

// The passphrase of an encrypted key, from a file only its owner can read (a passphrase
// on the command line would show in every user's `ps`). One line; a trailing newline is
// not part of it. Refused: a file group or others can read or write, a symlink, an empty
// passphrase, a NUL byte, more than 1023 bytes (what CAF passes to OpenSSL).
expected<std::string> read_passphrase_file(const std::string& path);

// All three files set, readable, a certificate that matches its key (decrypted with the
// passphrase, if one is set; an encrypted key without one is named, never prompted for on
// a terminal), and a CA file that loads. CAF's OpenSSL module would only find a bad file at the first connection, on its
// I/O thread, where the error ends the process: check first and name the file.
status check_node_tls(const node_tls& tls);

// Loads the middleman and CAF's OpenSSL module with these credentials, registers the
// node messages, and sets heartbeats so a node that vanishes without closing its
// connection is noticed. Call check_node_tls first.
void configure_node_network(caf::actor_system_config& cfg, const node_tls& tls);

} // namespace corral
