// Reading and writing cgroupfs files: small reads, one write(2) per value (the kernel's
// verdict is that write's result), "key value" counters, and the failure that says how to
// delegate a subtree when the kernel refuses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/failure.hpp"

namespace corral::cgroupfs {

extern const char* const kDelegateHint;

bool exists(const std::string& path);
std::optional<std::string> read_small(const std::string& path);
int write_small(const std::string& path, const std::string& value);  // 0 or the errno
failure access_failure(const std::string& what, int err);
status write_limit(const std::string& path, const std::string& value);
std::optional<std::uint64_t> keyed(const std::string& path, const std::string& key);
std::optional<std::uint64_t> number(const std::string& path);
std::vector<std::string> words(const std::string& text);
bool contains(const std::vector<std::string>& v, const std::string& x);

} // namespace corral::cgroupfs
