// multipart/form-data (RFC 7578 over RFC 2046's framing) of a buffered body: how E2B's
// file upload (POST /files) sends files. Parts are views into the body, not copies, so a
// 256 MiB upload is not held twice.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/failure.hpp"
#include "proto/http/http_message.hpp"

namespace corral {

struct multipart_part {
  http_headers headers;                 // names lower-cased
  std::string name;                     // Content-Disposition's name (form-data requires one)
  std::optional<std::string> filename;  // filename, or filename* (RFC 5987) when it decodes
  std::string_view data;                // a view into the body: keep the body alive

  const std::string* header(std::string_view lower_name) const;
};

// The boundary parameter of a multipart/form-data Content-Type (quoted or not).
expected<std::string> multipart_boundary(std::string_view content_type);

// Every part of `body`, in order; preamble and epilogue ignored.
expected<std::vector<multipart_part>> parse_multipart(std::string_view content_type, std::string_view body);

} // namespace corral
