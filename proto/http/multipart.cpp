#include "proto/http/multipart.hpp"

#include <algorithm>
#include <cctype>

namespace corral {

namespace {

constexpr std::size_t kMaxBoundary = 70;  // RFC 2046 §5.1.1

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// `value; name=token; name="quoted \" string"`: Content-Type and Content-Disposition.
struct parameterized {
  std::string value;  // lower-cased
  http_headers params;  // names lower-cased

  const std::string* param(std::string_view name) const {
    for (const auto& [n, v] : params)
      if (n == name) return &v;
    return nullptr;
  }
};

expected<parameterized> parse_parameterized(std::string_view text, std::string_view what) {
  parameterized out;
  auto semi = text.find(';');
  out.value = lower(trim(text.substr(0, semi)));
  std::size_t at = semi == std::string_view::npos ? text.size() : semi;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ';' || text[at] == ' ' || text[at] == '\t')) ++at;
    if (at >= text.size()) break;
    auto end = text.find_first_of("=;", at);
    auto name = lower(trim(text.substr(at, end - at)));
    if (end == std::string_view::npos || text[end] == ';') {  // a bare flag: kept, valueless
      out.params.emplace_back(std::move(name), "");
      at = end == std::string_view::npos ? text.size() : end;
      continue;
    }
    at = end + 1;
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    std::string value;
    if (at < text.size() && text[at] == '"') {
      bool closed = false;
      for (++at; at < text.size(); ++at) {
        if (text[at] == '\\' && at + 1 < text.size()) value += text[++at];
        else if (text[at] == '"') { closed = true; ++at; break; }
        else value += text[at];
      }
      if (!closed)
        return make_failure(failure_kind::invalid_request,
                            std::string(what) + ": the quoted value of " + name + " has no closing quote");
    } else {
      auto stop = text.find(';', at);
      value = std::string(trim(text.substr(at, stop - at)));
      at = stop == std::string_view::npos ? text.size() : stop;
    }
    out.params.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

// RFC 5987's charset'language'percent-encoded, as in filename*=UTF-8''na%C3%AFve.txt.
std::optional<std::string> decode_ext_value(std::string_view text) {
  auto quotes = text.find('\'');
  if (quotes == std::string_view::npos) return std::nullopt;
  auto second = text.find('\'', quotes + 1);
  if (second == std::string_view::npos) return std::nullopt;
  return percent_decode(text.substr(second + 1));
}

// Whether a delimiter ("--boundary") ending at `at` is really one: followed by "--" (the
// last) or by optional blanks and CRLF. Anything else means the bytes were content.
enum class delimiter_kind { not_one, next_part, last };
delimiter_kind delimiter_after(std::string_view body, std::size_t at) {
  if (body.substr(at, 2) == "--") return delimiter_kind::last;
  while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
  return body.substr(at, 2) == "\r\n" ? delimiter_kind::next_part : delimiter_kind::not_one;
}

expected<http_headers> parse_part_headers(std::string_view block, std::size_t index) {
  http_headers headers;
  while (!block.empty()) {
    auto eol = block.find("\r\n");
    auto line = block.substr(0, eol);
    block = eol == std::string_view::npos ? std::string_view{} : block.substr(eol + 2);
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return make_failure(failure_kind::invalid_request,
                          "multipart part " + std::to_string(index) + ": a header line without a name and ':'");
    headers.emplace_back(lower(trim(line.substr(0, colon))), std::string(trim(line.substr(colon + 1))));
  }
  return headers;
}

} // namespace

const std::string* multipart_part::header(std::string_view lower_name) const {
  for (const auto& [n, v] : headers)
    if (n == lower_name) return &v;
  return nullptr;
}

expected<std::string> multipart_boundary(std::string_view content_type) {
  auto parsed = parse_parameterized(content_type, "Content-Type");
  if (!parsed) return parsed.error();
  if (parsed->value != "multipart/form-data")
    return make_failure(failure_kind::invalid_request,
                        "expected Content-Type multipart/form-data, got '" + std::string(content_type) + "'");
  const auto* boundary = parsed->param("boundary");
  if (!boundary || boundary->empty())
    return make_failure(failure_kind::invalid_request, "the multipart/form-data Content-Type has no boundary parameter");
  if (boundary->size() > kMaxBoundary)
    return make_failure(failure_kind::invalid_request,
                        "the multipart boundary is longer than RFC 2046's 70 characters");
  return *boundary;
}

expected<std::vector<multipart_part>> parse_multipart(std::string_view content_type, std::string_view body) {
  auto boundary = multipart_boundary(content_type);
  if (!boundary) return boundary.error();
  const std::string delimiter = "--" + *boundary;
  const std::string inner = "\r\n" + delimiter;  // every delimiter after the first

  // The first delimiter opens the body or a line of it; what precedes is preamble.
  std::size_t at = std::string_view::npos;
  if (body.substr(0, delimiter.size()) == delimiter && delimiter_after(body, delimiter.size()) != delimiter_kind::not_one) {
    at = delimiter.size();
  } else {
    for (auto found = body.find(inner); found != std::string_view::npos; found = body.find(inner, found + 1)) {
      if (delimiter_after(body, found + inner.size()) != delimiter_kind::not_one) {
        at = found + inner.size();
        break;
      }
    }
  }
  if (at == std::string_view::npos)
    return make_failure(failure_kind::invalid_request,
                        "the multipart body has no line '" + delimiter + "' (does the boundary match the Content-Type?)");

  std::vector<multipart_part> parts;
  while (delimiter_after(body, at) == delimiter_kind::next_part) {
    auto index = parts.size();
    at = body.find("\r\n", at) + 2;
    std::size_t data_start;
    std::string_view header_block;
    if (body.substr(at, 2) == "\r\n") {  // a part without headers
      data_start = at + 2;
    } else {
      auto blank = body.find("\r\n\r\n", at);
      if (blank == std::string_view::npos)
        return make_failure(failure_kind::invalid_request,
                            "multipart part " + std::to_string(index) + ": its headers never end (no blank line)");
      header_block = body.substr(at, blank - at);
      data_start = blank + 4;
    }
    auto headers = parse_part_headers(header_block, index);
    if (!headers) return headers.error();

    std::size_t end = std::string_view::npos;
    for (auto found = body.find(inner, data_start); found != std::string_view::npos; found = body.find(inner, found + 1)) {
      if (delimiter_after(body, found + inner.size()) != delimiter_kind::not_one) {
        end = found;
        break;
      }
    }
    if (end == std::string_view::npos)
      return make_failure(failure_kind::invalid_request,
                          "multipart part " + std::to_string(index) + " is not ended by '" + delimiter +
                              "' (was the body cut short?)");

    multipart_part part;
    part.headers = std::move(*headers);
    part.data = body.substr(data_start, end - data_start);
    const auto* disposition = part.header("content-disposition");
    if (!disposition)
      return make_failure(failure_kind::invalid_request,
                          "multipart part " + std::to_string(index) + " has no Content-Disposition (form-data needs one)");
    auto parsed = parse_parameterized(*disposition, "Content-Disposition");
    if (!parsed) return parsed.error();
    const auto* name = parsed->param("name");
    if (parsed->value != "form-data" || !name)
      return make_failure(failure_kind::invalid_request, "multipart part " + std::to_string(index) +
                                                             ": Content-Disposition must be form-data with a name, got '" +
                                                             *disposition + "'");
    part.name = *name;
    if (const auto* ext = parsed->param("filename*")) part.filename = decode_ext_value(*ext);
    if (!part.filename)
      if (const auto* plain = parsed->param("filename")) part.filename = *plain;
    parts.push_back(std::move(part));
    at = end + inner.size();
  }
  return parts;  // the loop ends at the closing "--boundary--": what follows is epilogue
}

} // namespace corral
