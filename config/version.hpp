// corral's version: CMake's project version, for `corral --version`, the daemon's health,
// `describe` and every result. One compiled definition (config/version.cpp), so a new
// version rebuilds one file.
#pragma once

namespace corral {

const char* corral_version();

} // namespace corral
