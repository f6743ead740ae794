// Peeks the server name (SNI) out of a TLS ClientHello, without decrypting anything: a
// CONNECT to an allowed name whose ClientHello asks for another name (domain fronting)
// is refused. Only the first handshake record is read, bounded by its own length.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corral {

enum class hello_status {
  incomplete,  // the first record is not all here yet
  not_tls,     // the bytes are not a TLS handshake record
  no_sni,      // a ClientHello without a server name
  sni,         // `name` holds the server name, lower case
  malformed,   // a handshake record that does not parse
};

struct client_hello {
  hello_status status = hello_status::incomplete;
  std::string name;
};

// A TLS record is at most 16 KiB plus its header: the proxy never buffers more to peek.
inline constexpr std::size_t kMaxHelloPeek = 5 + 16384 + 256;

client_hello peek_client_hello(std::string_view buf);

} // namespace corral
