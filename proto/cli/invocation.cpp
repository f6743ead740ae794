#include "proto/cli/invocation.hpp"

namespace corral::cli {

namespace {
char** invocation = nullptr;
} // namespace

void remember_invocation(char** argv) { invocation = argv; }
char** remembered_invocation() { return invocation; }

} // namespace corral::cli
