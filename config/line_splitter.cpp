#include "config/line_splitter.hpp"

namespace corral {

std::vector<line_splitter::piece> line_splitter::feed(std::string_view bytes) {
  std::vector<piece> out;
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    auto part = bytes.substr(0, nl);
    if (skipping_) {
      // Inside an oversized line: drop bytes until its newline.
    } else if (partial_.size() + part.size() > max_) {
      out.push_back({true, {}, partial_.size() + part.size()});
      partial_.clear();
      skipping_ = true;
    } else {
      partial_.append(part);
    }
    if (nl == std::string_view::npos) break;
    if (!skipping_) {
      if (cr_ == carriage_return::strip && !partial_.empty() && partial_.back() == '\r') partial_.pop_back();
      out.push_back({false, std::move(partial_), 0});
    }
    partial_.clear();
    skipping_ = false;
    bytes.remove_prefix(nl + 1);
  }
  return out;
}

} // namespace corral
