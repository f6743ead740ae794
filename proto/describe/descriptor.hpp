// The profile's descriptor: what an audit log records about the boundary an execution
// ran in. Canonical JSON of the frozen profile, the detected kernel features and what the
// selected tier enforces here, plus "digest": "sha256:<hex>" of that JSON.
//
// Canonical form: nlohmann::json objects keep their keys in std::map order and dump()
// without indent emits no whitespace, so the same content always dumps to the same bytes.
// Arrays keep the profile's order (root order matters: later mounts cover earlier ones).
// The digest covers every key except "digest" itself and "config_path": where a file was
// read from is provenance, not policy, so a copied file enforces the same digest.
// Environment variables appear by name only; their values may be credentials.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "config/profile.hpp"
#include "tiers/kernel_features.hpp"
#include "tiers/tier_registry.hpp"

namespace corral {

nlohmann::json profile_descriptor(const profile& p, const kernel_features& features,
                                  const tier_registry& tiers);

// "sha256:<64 hex digits>" over body.dump(); empty if libcrypto fails.
std::string descriptor_digest(const nlohmann::json& body);

} // namespace corral
