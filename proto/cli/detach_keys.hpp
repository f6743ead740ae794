// The key sequence that leaves a workspace's terminal running and ends only this client:
// ctrl-p ctrl-q, as `docker attach` uses. Keystrokes pass through it on their way to the
// terminal; a ctrl-p is held back until the next key says whether it began the sequence.
#pragma once

#include <string>
#include <string_view>

namespace corral::cli {

class detach_keys {
public:
  static constexpr char kFirst = '\x10';   // ctrl-p
  static constexpr char kSecond = '\x11';  // ctrl-q

  // What of `typed` goes on to the terminal; `detach` turns true when the sequence is
  // complete (the bytes after it are dropped: the client is leaving).
  std::string pass(std::string_view typed, bool& detach) {
    std::string out;
    for (char c : typed) {
      if (held_) {
        held_ = false;
        if (c == kSecond) {
          detach = true;
          return out;
        }
        out += kFirst;
      }
      if (c == kFirst) held_ = true;
      else out += c;
    }
    return out;
  }

private:
  bool held_ = false;
};

} // namespace corral::cli
