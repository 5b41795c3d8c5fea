// Globs over file paths, for a suite's `cases`, `runs` and `rules` lines.
#include "util/glob_files.hpp"

#include <algorithm>
#include <filesystem>

#include "util/glob.hpp"

namespace trajcheck::detail {

namespace fs = std::filesystem;

namespace {

bool has_glob(std::string_view s) { return s.find_first_of("*?") != std::string_view::npos; }

// What `p` is, when it exists and is not a regular file; empty otherwise.
std::string not_regular(const std::string& p) {
  std::error_code ec;
  fs::file_status st = fs::status(p, ec);
  if (st.type() == fs::file_type::regular) return {};
  if (st.type() == fs::file_type::not_found) {
    fs::file_status link = fs::symlink_status(p, ec);
    return link.type() == fs::file_type::symlink ? "a dangling symbolic link" : "";
  }
  switch (st.type()) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    default: return "not a regular file";
  }
}

}  // namespace

// Files matching a glob (`*`/`?` within one path component), sorted.
std::vector<std::string> glob_files(const std::string& pattern, std::vector<std::string>* skipped) {
  auto skip = [&](const std::string& p) {
    if (!skipped) return;
    if (std::string what = not_regular(p); !what.empty()) skipped->push_back(p + " is " + what);
  };
  const std::size_t skipped_before = skipped ? skipped->size() : 0;
  std::vector<std::string> out;
  if (!has_glob(pattern)) {
    std::error_code ec;
    if (fs::is_regular_file(pattern, ec)) out.push_back(pattern);
    else skip(pattern);
    return out;
  }
  std::vector<std::string> parts;
  std::string cur;
  for (char c : pattern) {
    if (c == '/') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  std::vector<std::string> paths{pattern[0] == '/' ? "/" : ""};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) continue;
    bool last = i + 1 == parts.size();
    std::vector<std::string> next;
    for (const std::string& base : paths) {
      std::string dir = base.empty() ? "." : base;
      if (!has_glob(part)) {
        std::string p = base.empty() ? part : (base == "/" ? "/" + part : base + "/" + part);
        std::error_code ec;
        if (last ? fs::is_regular_file(p, ec) : fs::is_directory(p, ec)) next.push_back(p);
        else if (last) skip(p);
        continue;
      }
      std::error_code ec;
      std::vector<std::string> found;
      for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::string name = it->path().filename().string();
        if (name.empty() || name[0] == '.') continue;
        if (!glob_match(part, name)) continue;
        std::string p = base.empty() ? name : (base == "/" ? "/" + name : base + "/" + name);
        std::error_code ec2;
        if (last ? !it->is_regular_file(ec2) : !it->is_directory(ec2)) {
          if (last) skip(p);
          continue;
        }
        found.push_back(std::move(p));
      }
      std::sort(found.begin(), found.end());
      next.insert(next.end(), found.begin(), found.end());
    }
    paths = std::move(next);
  }
  if (skipped) std::sort(skipped->begin() + static_cast<std::ptrdiff_t>(skipped_before), skipped->end());
  return paths;
}

}  // namespace trajcheck::detail
