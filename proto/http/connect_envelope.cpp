#include "proto/http/connect_envelope.hpp"

namespace corral {

namespace {
constexpr std::size_t kPrefix = 5;

std::string hex_byte(std::uint8_t b) {
  static constexpr char digits[] = "0123456789abcdef";
  return {digits[b >> 4], digits[b & 15]};
}
} // namespace

std::string envelope(std::string_view json, bool end_stream) {
  // Connect frames a message in 32 bits; nothing corral sends comes near 4 GiB.
  auto n = static_cast<std::uint32_t>(json.size());
  std::string out;
  out.reserve(kPrefix + json.size());
  out += static_cast<char>(end_stream ? kEnvelopeEndStream : 0);
  out += static_cast<char>((n >> 24) & 0xff);
  out += static_cast<char>((n >> 16) & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  out += static_cast<char>(n & 0xff);
  out += json;
  return out;
}

expected<std::vector<envelope_frame>> decode_envelopes(std::string_view body, std::size_t max_message) {
  std::vector<envelope_frame> frames;
  std::size_t at = 0;
  while (at < body.size()) {
    if (body.size() - at < kPrefix)
      return make_failure(failure_kind::invalid_request,
                          "the Connect stream ends inside an envelope header at byte " + std::to_string(at) +
                              " (an envelope starts with 5 bytes: flags and a big-endian length)");
    auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(body[at + i]); };
    std::uint8_t flags = byte(0);
    std::size_t length = (std::size_t{byte(1)} << 24) | (std::size_t{byte(2)} << 16) | (std::size_t{byte(3)} << 8) | byte(4);
    if (flags & kEnvelopeCompressed)
      return make_failure(failure_kind::invalid_request,
                          "a compressed Connect message at byte " + std::to_string(at) +
                              ": this server accepts none (send without Connect-Content-Encoding)");
    if (flags & ~kEnvelopeEndStream)
      return make_failure(failure_kind::invalid_request,
                          "unknown Connect envelope flags 0x" + hex_byte(flags) + " at byte " + std::to_string(at));
    if (length > max_message)
      return make_failure(failure_kind::limit_exceeded,
                          "a Connect message of " + std::to_string(length) + " bytes is over the limit of " +
                              std::to_string(max_message));
    if (body.size() - at - kPrefix < length)
      return make_failure(failure_kind::invalid_request,
                          "the Connect stream ends inside a message: " + std::to_string(length) + " bytes announced at byte " +
                              std::to_string(at) + ", " + std::to_string(body.size() - at - kPrefix) + " present");
    frames.push_back({flags, body.substr(at + kPrefix, length)});
    at += kPrefix + length;
  }
  return frames;
}

} // namespace corral
