#include "proto/http/request_reader.hpp"

#include <cctype>
#include <utility>

#include <http_parser.h>

namespace corral {

namespace {
// What a header line costs beyond its name and value ("": ", CRLF): counted so that many
// empty headers cannot slip under the head limit.
constexpr std::size_t kHeaderLineOverhead = 4;
}

struct request_reader::state {
  std::uint64_t connection;
  std::size_t max_head, max_body;
  http_parser parser{};
  http_request current;
  std::string field, value;
  bool in_value = false;
  std::size_t head_bytes = 0;
  bool awaiting_head = true;
  bool continue_pending = false;
  bool finished = false;
  std::optional<request_refusal> refused;
  std::vector<http_request> done;

  static state& of(http_parser* p) { return *static_cast<state*>(p->data); }

  int refuse(int status, std::string message) {
    if (!refused) refused = request_refusal{status, std::move(message)};
    return -1;  // any non-zero return halts the parser
  }

  int count_head(std::size_t n) {
    head_bytes += n;
    if (head_bytes > max_head)
      return refuse(431, "the request head is larger than " + std::to_string(max_head) + " bytes");
    return 0;
  }

  void finish_header() {
    if (!in_value) return;
    for (auto& c : field) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    current.headers.emplace_back(std::move(field), std::move(value));
    field.clear();
    value.clear();
    in_value = false;
  }

  // Origin form ("/a?b") as servers receive it; absolute form ("http://h/a?b") as a proxy
  // would forward it; "*" for OPTIONS. Authority form (CONNECT) is not served.
  int split_target() {
    std::string_view target = current.raw_target;
    if (target == "*") {
      current.path = "*";
      return 0;
    }
    if (target.empty() || target.front() != '/') {
      auto scheme = target.find("://");
      if (scheme == std::string_view::npos) return refuse(400, "the request target must be a path (got '" + current.raw_target + "')");
      auto slash = target.find('/', scheme + 3);
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
    }
    target = target.substr(0, target.find('#'));
    auto question = target.find('?');
    if (question != std::string_view::npos) current.query = std::string(target.substr(question + 1));
    auto path = percent_decode(target.substr(0, question));
    if (!path) return refuse(400, "the request path has a malformed %-escape or an encoded NUL");
    current.path = std::move(*path);
    return 0;
  }

  static int on_message_begin(http_parser* p) {
    auto& s = of(p);
    s.current = http_request{};
    s.current.connection = s.connection;
    s.head_bytes = 0;
    s.in_value = false;
    s.field.clear();
    s.value.clear();
    s.awaiting_head = true;
    return 0;
  }
  static int on_url(http_parser* p, const char* at, size_t n) {
    auto& s = of(p);
    s.current.raw_target.append(at, n);
    return s.count_head(n);
  }
  static int on_header_field(http_parser* p, const char* at, size_t n) {
    auto& s = of(p);
    if (s.in_value || s.field.empty()) {
      s.finish_header();
      if (int rc = s.count_head(kHeaderLineOverhead)) return rc;
    }
    s.field.append(at, n);
    return s.count_head(n);
  }
  static int on_header_value(http_parser* p, const char* at, size_t n) {
    auto& s = of(p);
    s.in_value = true;
    s.value.append(at, n);
    return s.count_head(n);
  }
  static int on_headers_complete(http_parser* p) {
    auto& s = of(p);
    s.finish_header();
    s.awaiting_head = false;
    if (p->http_major != 1) return s.refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
    s.current.method = http_method_str(static_cast<http_method>(p->method));
    if (int rc = s.split_target()) return rc;
    // Refused before a byte of the body is read: the client need not send it.
    if ((p->flags & F_CONTENTLENGTH) && p->content_length > s.max_body)
      return s.refuse(413, "the request body (" + std::to_string(p->content_length) + " bytes) is larger than " +
                               std::to_string(s.max_body) + " bytes");
    bool body_follows = (p->flags & F_CHUNKED) || ((p->flags & F_CONTENTLENGTH) && p->content_length > 0);
    if (const auto* expect = s.current.header("expect"); expect && body_follows) {
      std::string lowered = *expect;
      for (auto& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      s.continue_pending = lowered == "100-continue";
    }
    return 0;
  }
  static int on_body(http_parser* p, const char* at, size_t n) {
    auto& s = of(p);
    // A chunked body announces no length: it is counted as it comes.
    if (s.current.body.size() + n > s.max_body)
      return s.refuse(413, "the request body is larger than " + std::to_string(s.max_body) + " bytes");
    s.current.body.append(at, n);
    return 0;
  }
  static int on_message_complete(http_parser* p) {
    auto& s = of(p);
    s.current.keep_alive = http_should_keep_alive(p) != 0;
    s.continue_pending = false;  // the body came with its head: no 100 needed
    bool last = !s.current.keep_alive;
    s.done.push_back(std::move(s.current));
    s.current = http_request{};
    if (last) {
      // Bytes after a Connection: close request are not a request of this connection.
      s.finished = true;
      http_parser_pause(p, 1);
    }
    return 0;
  }

  static const http_parser_settings& settings() {
    static const http_parser_settings table = [] {
      http_parser_settings t{};
      http_parser_settings_init(&t);
      t.on_message_begin = on_message_begin;
      t.on_url = on_url;
      t.on_header_field = on_header_field;
      t.on_header_value = on_header_value;
      t.on_headers_complete = on_headers_complete;
      t.on_body = on_body;
      t.on_message_complete = on_message_complete;
      return t;
    }();
    return table;
  }
};

request_reader::request_reader(std::uint64_t connection, std::size_t max_head_bytes, std::size_t max_body_bytes)
    : state_(std::make_unique<state>()) {
  state_->connection = connection;
  state_->max_head = max_head_bytes;
  state_->max_body = max_body_bytes;
  http_parser_init(&state_->parser, HTTP_REQUEST);
  state_->parser.data = state_.get();
}

request_reader::~request_reader() = default;

request_reader::output request_reader::feed(std::string_view bytes) {
  auto& s = *state_;
  output out;
  if (s.finished) return out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    auto n = http_parser_execute(&s.parser, &state::settings(), bytes.data() + at, bytes.size() - at);
    at += n;
    auto err = HTTP_PARSER_ERRNO(&s.parser);
    if (err == HPE_PAUSED) break;  // after a Connection: close request
    if (err != HPE_OK) {
      if (err == HPE_HEADER_OVERFLOW) s.refuse(431, "the request head is too large");
      else s.refuse(400, std::string("malformed request: ") + http_errno_description(err));
      break;
    }
    // The parser stops after a head asking for Upgrade (h2c, websocket): corral declines
    // (RFC 9110 lets a server ignore Upgrade) and reads what follows as HTTP/1.1.
    if (s.parser.upgrade) s.parser.upgrade = 0;
    else if (n == 0) break;
  }
  if (s.refused) s.finished = true;
  out.requests = std::move(s.done);
  s.done.clear();
  out.continue_expected = std::exchange(s.continue_pending, false);
  out.refused = s.refused;
  return out;
}

bool request_reader::awaiting_head() const { return state_->awaiting_head; }
bool request_reader::finished() const { return state_->finished; }

} // namespace corral
