#include "actors/egress/http_proxy_head.hpp"

#include <algorithm>
#include <cctype>

namespace corral {

namespace {

proxy_head bad(std::string why) {
  proxy_head h;
  h.status = head_status::malformed;
  h.error = std::move(why);
  return h;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

} // namespace

bool split_host_port(std::string_view text, std::string& host, std::uint16_t& port) {
  std::string_view h, p;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) return false;
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
  }
  if (h.empty() || p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  unsigned long v = std::stoul(std::string(p));
  if (v == 0 || v > 65535) return false;
  host = std::string(h);
  port = static_cast<std::uint16_t>(v);
  return true;
}

proxy_head parse_proxy_head(std::string_view buf) {
  auto end = buf.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (buf.size() >= kMaxProxyHead) {
      proxy_head h;
      h.status = head_status::too_large;
      return h;
    }
    // Garbage need not wait for the cap: a request line is printable and short.
    auto line_end = buf.find("\r\n");
    auto first = buf.substr(0, line_end == std::string_view::npos ? buf.size() : line_end);
    if (std::any_of(first.begin(), first.end(), [](char c) { return c != '\t' && static_cast<unsigned char>(c) < 0x20; }) ||
        (line_end == std::string_view::npos && first.size() > 8192))
      return bad("the request line is not HTTP");
    return {};
  }
  if (end + 4 > kMaxProxyHead) {
    proxy_head h;
    h.status = head_status::too_large;
    return h;
  }
  std::string_view head = buf.substr(0, end);
  auto line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return bad("the request line is not 'METHOD TARGET HTTP/1.x'");
  auto method = line.substr(0, sp1);
  auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  auto version = line.substr(sp2 + 1);
  if (!token(method) || (version != "HTTP/1.1" && version != "HTTP/1.0"))
    return bad("the request line is not 'METHOD TARGET HTTP/1.x'");

  proxy_head h;
  h.length = end + 4;
  if (method == "CONNECT") {
    if (!split_host_port(target, h.host, h.port)) return bad("CONNECT needs host:port");
    h.tunnel = true;
    h.status = head_status::complete;
    return h;
  }
  constexpr std::string_view kScheme = "http://";
  if (target.size() < kScheme.size() || !iequals(target.substr(0, kScheme.size()), kScheme))
    return bad("a proxy request needs an absolute http:// URI (use CONNECT for https)");
  auto rest = target.substr(kScheme.size());
  auto slash = rest.find_first_of("/?#");
  auto authority = rest.substr(0, slash);
  std::string path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (path.front() != '/') path = "/" + path;
  if (authority.find('@') != std::string_view::npos) return bad("credentials in the URI are not forwarded");
  if (!split_host_port(authority, h.host, h.port)) {
    if (authority.empty() || authority.find(':') != std::string_view::npos) {
      if (!(authority.size() > 2 && authority.front() == '[' && authority.back() == ']'))
        return bad("the URI's host is not valid");
      h.host = std::string(authority.substr(1, authority.size() - 2));
    } else {
      h.host = std::string(authority);
    }
    h.port = 80;
  }
  // Origin form upstream, one request per connection: the proxy decides per destination,
  // so a kept-alive connection must not carry a request for another host.
  std::string out = std::string(method) + " " + path + " " + std::string(version) + "\r\n";
  std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  bool saw_host = false;
  while (pos < head.size()) {
    auto next = head.find("\r\n", pos);
    auto field = head.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    pos = next == std::string_view::npos ? head.size() : next + 2;
    auto colon = field.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad("a header line has no name");
    auto name = field.substr(0, colon);
    if (iequals(name, "proxy-connection") || iequals(name, "proxy-authorization") || iequals(name, "connection") ||
        iequals(name, "keep-alive"))
      continue;
    saw_host = saw_host || iequals(name, "host");
    out += std::string(field) + "\r\n";
  }
  if (!saw_host) out += "Host: " + std::string(authority) + "\r\n";
  out += "Connection: close\r\n\r\n";
  h.upstream = std::move(out);
  h.status = head_status::complete;
  return h;
}

std::string proxy_response(int code, const std::string& reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + " " + reason +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

} // namespace corral
