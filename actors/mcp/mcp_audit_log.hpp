// The MCP gateway's audit trail: one JSON line per decision (actors/mcp/mcp_gate.hpp),
// appended to a file of the operator's outside the boundary, bounded: past `max_bytes` the
// file is renamed to FILE.1 (replacing the previous one) and a new one begun, so at most
// twice the bound is kept (sessions sharing a path follow each other's rotation; the bound
// is then each one's, and a rotation may replace FILE.1 early). Owned by the session that
// makes the decisions; opened before its child starts, so an audit that cannot be written
// refuses the session.
#pragma once

#include <cstdint>
#include <string>

#include "config/failure.hpp"

namespace corral {

class mcp_audit_log {
public:
  mcp_audit_log() = default;
  ~mcp_audit_log();
  mcp_audit_log(mcp_audit_log&& other) noexcept;
  mcp_audit_log& operator=(mcp_audit_log&& other) noexcept;

  // Creates the file (0600) or appends to it; never follows a symlink at the last step.
  static expected<mcp_audit_log> open(const std::string& path, std::uint64_t max_bytes);

  bool is_open() const { return fd_ >= 0; }
  // One line ('\n' added). False when the write failed; the error is kept for the report.
  bool append(const std::string& line);
  const std::string& last_error() const { return error_; }
  const std::string& path() const { return path_; }

private:
  bool rotate();
  bool reopen();
  bool follow_rotation();

  int fd_ = -1;
  std::string path_;
  std::uint64_t max_ = 0;
  std::uint64_t size_ = 0;
  std::string error_;
};

} // namespace corral
