// A process by host pid and start time: the pair names one process for good, where a pid
// alone may be reused once its process is reaped. Read by the holder's helper (which
// reports it), by an entering helper (which refuses a pid whose start time differs) and by
// the runtime when it lists a workspace's processes.
#pragma once

#include <cstdint>
#include <optional>
#include <sys/types.h>

namespace corral {

// Field 22 of /proc/<pid>/stat (clock ticks after boot); nothing when the process is gone.
std::optional<std::uint64_t> process_start_time(pid_t pid);

} // namespace corral
