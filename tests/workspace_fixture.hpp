// What the workspace tests share: a landlock profile with a short kill grace, a shell
// command run in a workspace, and where a workspace's files are on the host.
#pragma once

#include <chrono>
#include <string>

#include "runtime_fixture.hpp"

namespace corral::testing {

inline profile workspace_profile() {
  using namespace std::chrono_literals;
  profile p;
  p.tier = "landlock";
  p.limit.kill_grace = 200ms;
  return p;
}

inline exec_request in_workspace(const std::string& workspace, const std::string& code) {
  auto r = shell(code);
  r.workspace = workspace;
  return r;
}

inline std::string files_of(const test_runtime& t, const std::string& id) {
  return t.rt->workspaces_dir() + "/" + id + "/root";
}

// A landlock runtime with one fresh workspace (after REQUIRE_LANDLOCK), for the cases that
// need nothing more.
struct one_workspace {
  test_runtime t{workspace_profile(), false};
  std::string id;
  one_workspace() {
    auto w = t.rt->create_workspace({});
    REQUIRE(w);
    id = w->record.id;
  }
};

} // namespace corral::testing
