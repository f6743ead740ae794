// Turns a request into an execution plan, or says exactly why it cannot run: validation
// (empty argv, NUL bytes, bad env keys, oversized stdin), the profile's limits tightened by
// the request, the language's steps, the environment, and the scratch directory.
#pragma once

#include <memory>
#include <string>

#include "actors/exec_request.hpp"
#include "actors/execution.hpp"
#include "actors/workspaces/workspace_messages.hpp"
#include "config/failure.hpp"
#include "config/profile.hpp"

namespace corral {

// Checks the request alone (no profile): everything execve could not carry or that makes
// no sense. Exposed for tests and for the wire protocol's early rejection.
status validate_request(const exec_request& request);

struct planning_context {
  const profile* prof = nullptr;
  std::shared_ptr<const tier> boundary;
  std::string scratch_parent;  // the per-execution scratch dir is created below this
  std::string caller_path;     // the caller's PATH, taken before anything is cleared
  // Set for an execution in a workspace: its files are the /work it gets instead of a
  // scratch dir, and its limits narrow the workspace's first.
  const workspace_borrowed* workspace = nullptr;
};

// Names the scratch dir's parent and the source file to write in it; the execution makes
// the dir (or takes a warm jail's), writes the file and removes the dir at its end. In a
// workspace: no scratch dir, and a language that needs a source file is refused (it would
// land among the workspace's own files).
expected<execution_plan> plan_execution(const exec_request& request, const std::string& id,
                                        const planning_context& ctx);

} // namespace corral
