// Files named by a path with `*` and `?` wildcards.
#pragma once

#include <string>
#include <vector>

namespace trajcheck::detail {

// Files matching a glob (`*`/`?` within one path component; names starting with '.' are
// skipped), sorted per component. A pattern without wildcards names itself if it is a
// regular file. `skipped` (optional) receives "PATH is a directory" (a FIFO, a socket, a
// device, a dangling symbolic link) for each entry the last component matched that is not a
// regular file, so a caller can say why a file it expected was not read.
std::vector<std::string> glob_files(const std::string& pattern, std::vector<std::string>* skipped = nullptr);

}  // namespace trajcheck::detail
