// A bounded byte log: keeps the last `capacity` bytes appended (a session's stderr, a
// terminal's scrollback), so a chatty child costs the runtime a fixed amount of memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace corral {

class session_log {
public:
  explicit session_log(std::size_t capacity = 0) : capacity_(capacity) {}

  void append(std::string_view bytes) {
    total_ += bytes.size();
    if (capacity_ == 0) return;
    if (bytes.size() >= capacity_) {
      data_.assign(bytes.substr(bytes.size() - capacity_));
      return;
    }
    // Trim in bulk (at twice the capacity) so appends stay amortised O(n).
    data_.append(bytes);
    if (data_.size() > 2 * capacity_) data_.erase(0, data_.size() - capacity_);
  }

  std::string contents() const {
    return data_.size() > capacity_ ? data_.substr(data_.size() - capacity_) : data_;
  }
  std::uint64_t total_bytes() const { return total_; }
  std::uint64_t dropped_bytes() const { return total_ - contents().size(); }

private:
  std::size_t capacity_;
  std::string data_;
  std::uint64_t total_ = 0;
};

} // namespace corral
