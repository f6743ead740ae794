#include "proto/http/http_message.hpp"

#include <algorithm>
#include <cctype>

namespace corral {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// A CR or LF in a header would end it early and let a value write headers of its own
// (response splitting): they, and NUL, become spaces.
std::string header_safe(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c == '\r' || c == '\n' || c == '\0') c = ' ';
  return out;
}

void append_head(std::string& out, int status, const http_headers& headers) {
  out += "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  for (const auto& [name, value] : headers) out += header_safe(name) + ": " + header_safe(value) + "\r\n";
}

bool has_header(const http_headers& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return iequals(h.first, name); });
}

} // namespace

const std::string* http_request::header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return &value;
  return nullptr;
}

std::optional<std::string> http_request::query_param(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    if (!key || *key != name) continue;
    if (eq == std::string_view::npos) return std::string{};
    return percent_decode(pair.substr(eq + 1), true);
  }
  return std::nullopt;
}

std::string serialize(const http_response& response) {
  std::string out;
  out.reserve(128 + response.body.size());
  append_head(out, response.status, response.headers);
  bool bodiless = response.status < 200 || response.status == 204 || response.status == 304;
  if (!bodiless && !has_header(response.headers, "content-length"))
    out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  out += "\r\n";
  if (!bodiless) out += response.body;
  return out;
}

std::string stream_head(int status, const http_headers& headers) {
  std::string out;
  append_head(out, status, headers);
  out += "Transfer-Encoding: chunked\r\n\r\n";
  return out;
}

std::string chunk(std::string_view bytes) {
  if (bytes.empty()) return {};
  static constexpr char digits[] = "0123456789abcdef";
  std::string size;
  for (auto n = bytes.size(); n > 0; n >>= 4) size.insert(size.begin(), digits[n & 15]);
  std::string out;
  out.reserve(size.size() + bytes.size() + 4);
  out += size;
  out += "\r\n";
  out += bytes;
  out += "\r\n";
  return out;
}

std::string last_chunk() { return "0\r\n\r\n"; }

std::optional<std::string> percent_decode(std::string_view text, bool plus_as_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;  // "%" or "%A" at the end
      int hi = hex_value(text[i + 1]), lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_as_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;  // a NUL would cut the path short at the next C API
    out += c;
  }
  return out;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    case 507: return "Insufficient Storage";
    default: break;
  }
  // An unlisted code still gets its class's phrase: clients read the code, not the text.
  if (status >= 200 && status < 300) return "OK";
  if (status >= 300 && status < 400) return "Redirection";
  if (status >= 400 && status < 500) return "Client Error";
  if (status >= 500 && status < 600) return "Server Error";
  return "Unknown";
}

} // namespace corral
