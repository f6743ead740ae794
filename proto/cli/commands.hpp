// The CLI's subcommands; each returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

// Exit statuses of corral itself (the program's own pass through unchanged).
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitRefused = 125;
inline constexpr int kExitNotFound = 127;

int run_command(const std::vector<std::string>& args);
int doctor_command(const std::vector<std::string>& args);
int describe_command(const std::vector<std::string>& args);
int serve_command(const std::vector<std::string>& args);
int mcp_command(const std::vector<std::string>& args);
int shell_command(const std::vector<std::string>& args);
int workspace_command(const std::vector<std::string>& args);
int e2b_command(const std::vector<std::string>& args);

// Logging: quiet by default, debug with -v. Always on stderr: stdout is the program's.
void configure_logging(bool verbose);

} // namespace corral::cli
