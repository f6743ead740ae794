// corral's programs find each other: the exec helper, the microvm launcher and corral-full
// live beside the program that runs them (a build tree) or in libexec/corral (installed).
#pragma once

#include <string>

namespace corral {

// `name` beside this process's executable, in ../libexec/corral from it, in the libexec dir
// of the CMake package an embedder was built against (where it was really installed), or
// `installed` (the configured libexec path); the first that is executable, else "".
std::string find_companion_program(const std::string& name, const std::string& installed);

} // namespace corral
