// The launcher's half of a writable tree: what the guest reports the program wrote or
// removed is applied to the host directory the tree was copied from.
//
// The guest is untrusted, so every path is resolved beneath the tree's directory (opened
// once, before the VM starts) with openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS: a
// "../x", an absolute path, or a symlink on the host (planted there before, or by anyone
// else meanwhile) can never lead a write outside. Only regular files and directories are
// written; the total is bounded, since a guest could otherwise send without end.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/failure.hpp"
#include "tiers/microvm/guest_protocol.hpp"
#include "tiers/microvm/vm_options.hpp"

namespace corral {

class host_write_back {
public:
  // Opens the host directory of every writable tree; `byte_cap` bounds all writes together.
  static expected<host_write_back> open(const std::vector<host_tree>& trees, std::uint64_t byte_cap);
  host_write_back(host_write_back&&) noexcept;
  host_write_back& operator=(host_write_back&&) noexcept;
  ~host_write_back();

  // A `written` frame: a directory made, or a file's chunk written at its offset (offset 0
  // starts the file over). A symlink is refused: the agent never sends one back, and a
  // host link made by the guest could point anywhere.
  status write(const guest_file& entry);
  // A `removed` frame: the file or (empty) directory is removed; one already gone is fine.
  status remove(const guest_file& entry);

private:
  host_write_back() = default;
  // The directory holding `entry`, opened beneath its tree; sets `name` to the last part.
  expected<int> open_parent(const guest_file& entry, std::string& name) const;
  void close_all();

  std::vector<int> roots_;  // per tree: the open host directory, -1 for a read-only tree
  std::vector<std::string> hosts_;
  std::uint64_t byte_cap_ = 0;
  std::uint64_t bytes_ = 0;
};

} // namespace corral
