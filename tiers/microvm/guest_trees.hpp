// The agent's half of the request's trees: each is made in the guest (a tmpfs of its own,
// so it hides whatever the image has there) and filled with the copy the launcher sent;
// a read-only tree's tmpfs is then remounted read-only and its entries stay root's, a
// writable one's belong to nobody, the program's user. After the program, what changed in
// the writable trees is reported back as `written` and `removed` frames.
//
// Outside a VM (--channel-stdio, the launcher tests' stand-in) guest paths are placed
// below the agent's working directory and nothing is mounted: the protocol is tested
// there, not the boundary.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "config/failure.hpp"
#include "tiers/microvm/guest_protocol.hpp"

namespace corral {

class guest_trees {
public:
  using sender = std::function<void(frame_type, const std::string&)>;

  // `request` must outlive this. `prefix` is "" in the guest; `in_guest` mounts and chowns.
  guest_trees(const guest_request& request, std::string prefix, bool in_guest);
  status set_up();
  // Where a guest path is for the agent (the prefix prepended).
  std::string local(const std::string& guest_path) const { return prefix_ + guest_path; }
  bool is_tree(const std::string& guest_path) const;
  // Removals first (deepest first), then new and changed entries (parents first); a
  // notice on stderr for what cannot go back (symlinks, sockets, devices).
  void report_changes(const sender& send) const;

private:
  status fill(std::size_t tree);
  void walk(std::size_t tree, const std::string& rel, dev_t device, std::map<std::string, entry_kind>& seen,
            std::size_t& skipped) const;
  void send_file(std::size_t tree, const std::string& rel, std::uint32_t mode, const sender& send) const;
  bool unchanged_file(std::size_t tree, const std::string& rel, const guest_file& original, std::uint32_t mode) const;

  const guest_request& request_;
  std::string prefix_;
  bool in_guest_;
  // (tree, path) -> index into request_.files: what went in, to tell what changed.
  std::map<std::pair<std::size_t, std::string>, std::size_t> copied_;
};

} // namespace corral
