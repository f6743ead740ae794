#include "actors/message_framing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace corral {

namespace {

// A header section longer than this is not LSP framing: refuse rather than buffer it.
constexpr std::size_t kMaxHeaderBytes = 8 * 1024;

bool iequals_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

} // namespace

const char* to_string(framing_mode mode) {
  switch (mode) {
    case framing_mode::raw: return "raw";
    case framing_mode::newline: return "newline";
    case framing_mode::content_length: return "content-length";
  }
  return "?";
}

expected<framing_mode> parse_framing_mode(std::string_view name) {
  if (name == "raw") return framing_mode::raw;
  if (name == "newline" || name == "jsonl" || name == "ndjson") return framing_mode::newline;
  if (name == "content-length" || name == "lsp") return framing_mode::content_length;
  return make_failure(failure_kind::invalid_request,
                      "unknown framing '" + std::string(name) + "': use raw, newline or content-length");
}

frame_decoder::frame_decoder(framing_mode mode, std::size_t max_message_bytes)
    : mode_(mode), max_(max_message_bytes), lines_(max_message_bytes, line_splitter::carriage_return::keep) {}

failure frame_decoder::too_large(std::uint64_t size) const {
  return make_failure(failure_kind::limit_exceeded,
                      "a message of " + std::string(size > max_ ? "more than " : "") +
                          std::to_string(std::max<std::uint64_t>(size, max_)) +
                          " bytes exceeds the session's limit of " + std::to_string(max_) +
                          " bytes per message; it was skipped (raise max_message_bytes if it is legitimate)");
}

void frame_decoder::feed(std::string_view bytes, std::vector<decoded_frame>& out) {
  if (broken_ || bytes.empty()) return;
  if (mode_ == framing_mode::raw) {
    out.push_back({std::string(bytes), std::nullopt, false});
    return;
  }
  if (mode_ == framing_mode::newline) {
    for (auto& piece : lines_.feed(bytes)) {
      if (piece.oversized) out.push_back({{}, too_large(piece.size), false});
      else out.push_back({std::move(piece.line), std::nullopt, false});
    }
    return;
  }
  // content_length: bytes of a refused body are passed over without being kept.
  if (skipping_ > 0) {
    auto n = std::min<std::uint64_t>(skipping_, bytes.size());
    skipping_ -= n;
    bytes.remove_prefix(n);
  }
  buffer_.append(bytes);
  feed_content_length(out);
}

void frame_decoder::feed_content_length(std::vector<decoded_frame>& out) {
  for (;;) {
    if (skipping_ > 0) {
      auto n = std::min<std::uint64_t>(skipping_, buffer_.size());
      buffer_.erase(0, n);
      skipping_ -= n;
      if (skipping_ > 0) return;
    }
    if (!body_) {
      auto end = buffer_.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (buffer_.size() > kMaxHeaderBytes) {
          broken_ = true;
          out.push_back({{}, make_failure(failure_kind::invalid_request,
                                          "no end of a Content-Length header within " +
                                              std::to_string(kMaxHeaderBytes) + " bytes: the stream is not LSP-framed"),
                         true});
          buffer_.clear();
        }
        return;
      }
      std::optional<std::uint64_t> length;
      std::string_view headers(buffer_.data(), end);
      while (!headers.empty()) {
        auto eol = headers.find("\r\n");
        auto line = headers.substr(0, eol);
        headers = eol == std::string_view::npos ? std::string_view{} : headers.substr(eol + 2);
        if (!iequals_prefix(line, "content-length:")) continue;
        auto value = trim(line.substr(15));
        std::uint64_t n = 0;
        auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc{} || ptr != value.data() + value.size() || value.empty()) {
          broken_ = true;
          out.push_back({{}, make_failure(failure_kind::invalid_request,
                                          "malformed Content-Length header '" + std::string(line) + "'"),
                         true});
          buffer_.clear();
          return;
        }
        length = n;
      }
      if (!length) {
        broken_ = true;
        out.push_back({{}, make_failure(failure_kind::invalid_request,
                                        "a header section without Content-Length: the stream is not LSP-framed"),
                       true});
        buffer_.clear();
        return;
      }
      buffer_.erase(0, end + 4);
      if (*length > max_) {
        out.push_back({{}, too_large(*length), false});
        skipping_ = *length;
        continue;
      }
      body_ = static_cast<std::size_t>(*length);
    }
    if (buffer_.size() < *body_) return;
    out.push_back({buffer_.substr(0, *body_), std::nullopt, false});
    buffer_.erase(0, *body_);
    body_.reset();
  }
}

expected<std::string> encode_frame(framing_mode mode, std::string_view message, std::size_t max_message_bytes) {
  if (message.size() > max_message_bytes)
    return make_failure(failure_kind::limit_exceeded,
                        "the message is " + std::to_string(message.size()) +
                            " bytes; the session's limit is " + std::to_string(max_message_bytes) +
                            " bytes per message");
  switch (mode) {
    case framing_mode::raw: return std::string(message);
    case framing_mode::newline: {
      if (message.find('\n') != std::string_view::npos)
        return make_failure(failure_kind::invalid_request,
                            "a newline-framed message cannot contain a newline (serialize JSON on one line)");
      std::string out;
      out.reserve(message.size() + 1);
      out.append(message);
      out.push_back('\n');
      return out;
    }
    case framing_mode::content_length: {
      std::string out = "Content-Length: " + std::to_string(message.size()) + "\r\n\r\n";
      out.append(message);
      return out;
    }
  }
  return make_failure(failure_kind::internal, "unknown framing mode");
}

} // namespace corral
