#include "config/version.hpp"

namespace corral {

const char* corral_version() { return CORRAL_VERSION; }

} // namespace corral
