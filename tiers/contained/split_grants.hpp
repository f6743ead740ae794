// Landlock rules for roots with protected paths inside, where no mount can cover the path
// (the contained tier). Landlock rights only add up beneath a directory, so a right on a
// root is a right on everything under it: a root with a mask inside is granted piecewise
// instead. Each directory on the way from the root to a mask is granted listing only, each
// of its other entries the root's own rights (beneath, as usual), and the mask itself read-
// only (a .git) or nothing (a hidden path).
//
// What that costs, said in the launch plan: in a directory above a mask, entries cannot be
// created, removed or renamed (those rights would reach the mask too), and entries the
// host adds there after the plan was made are not granted. Symlinks among those entries are
// not followed into rules: a link is judged where it leads.
#pragma once

#include <string>
#include <vector>

#include "config/profile.hpp"
#include "tiers/jail/jail_spec.hpp"

namespace corral {

// The rules for one root (its host path) with `masks` (those inside it are used).
// `split` is set to the directories granted listing only.
std::vector<landlock_rule> split_root_rules(const std::string& root, bool writable, const std::vector<path_mask>& masks,
                                            std::vector<std::string>& split);

} // namespace corral
