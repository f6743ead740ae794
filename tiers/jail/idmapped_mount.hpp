// Idmapped bind mounts (Linux 5.12+, mount_setattr MOUNT_ATTR_IDMAP): a writable root is
// shown through a user namespace that maps the root's owner to the program's host id, so
// the program (still an unprivileged id) owns the root's files and what it writes belongs,
// on the host, to the root's owner. Shared by the runtime (detection at start-up) and the
// exec helper (which builds them before it clones the jail, while it still holds
// CAP_SYS_ADMIN over the host's filesystems; the jail's init then attaches them).
//
// Needs a root runtime and a filesystem that supports idmapping (ext4, xfs, btrfs, tmpfs
// 6.3+, ...). Where either is missing, a writable root is bound as before: what the
// program writes belongs to its own host id (nobody for a root runtime, the caller for an
// unprivileged one) and a root the program's id cannot write stays unwritable.
//
// Only raw system calls run in the short-lived child that holds the user namespace open,
// so the runtime may call this from its multithreaded process.
#pragma once

#include <cstdint>
#include <string>

namespace corral {

// An fd of a fresh user namespace whose only uid is `owner_uid` mapped to `program_uid`
// (gids alike), or -1 with why in `error`.
int open_idmap_userns(std::uint32_t owner_uid, std::uint32_t owner_gid, std::uint32_t program_uid,
                      std::uint32_t program_gid, std::string& error);

// A detached copy of the mount tree at `path`, idmapped through `userns_fd`, as an fd for
// move_mount; or -1 with why in `error`.
int open_idmapped_tree(const std::string& path, int userns_fd, std::string& error);

// Empty when an idmapped mount of `dir` works here (tried, then discarded); else why not.
std::string idmapped_mount_problem(const std::string& dir);

} // namespace corral
