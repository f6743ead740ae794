// This process's own argv, kept by main for a command that hands the whole invocation to
// another program (the lean `corral` to corral-full: proto/cli/lean/hand_to_full.cpp).
#pragma once

namespace corral::cli {

void remember_invocation(char** argv);
char** remembered_invocation();

} // namespace corral::cli
