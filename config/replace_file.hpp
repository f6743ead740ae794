// Replacing a small file whole: written to a new temp file beside it, then renamed over it,
// so a reader (or a runtime after a crash) sees the old content or the new, never half.
// Lease records, workspace records and marks, and the preflight verdicts all write so.
#pragma once

#include <string>
#include <string_view>

namespace corral {

// `temp` is created new (O_EXCL, never through a link, mode 0600): two writers never share
// one, so callers name it for themselves (a pid, a suffix their sweep knows). `sync`:
// fsync before the rename, for what must outlive a crash of the machine, not only of the
// runtime (the page cache survives that). False on failure, with errno saying why and the
// temp removed.
bool replace_file(const std::string& path, const std::string& temp, std::string_view bytes, bool sync);

} // namespace corral
