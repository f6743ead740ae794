// What corral.toml may say (the schema in config/toml/toml_profile.hpp) and how each key
// lands in the profile: [sandbox] and its tables, with every check a value must pass
// (roots resolved, sizes above their floors, tier names known, network rules parsed).
#pragma once

#include <toml++/toml.h>

#include "config/profile.hpp"
#include "config/toml/toml_reader.hpp"

namespace corral {

// Reads the whole document into `p`; the first failure is left in `r`.
void read_profile_document(reader& r, const toml::table& doc, profile& p);

} // namespace corral
