// Files named by a path with `*` and `?` wildcards.
#pragma once

#include <string>
#include <vector>

namespace trajcheck::detail {

// Files matching a glob (`*`/`?` within one path component; names starting with '.' are
// skipped), sorted per component. A pattern without wildcards names itself if it is a
// regular file.
std::vector<std::string> glob_files(const std::string& pattern);

}  // namespace trajcheck::detail
