// The input layer's listing and cutting (trajcheck/input.hpp): what inputs stand for, and the
// pieces a file may be read in. RecordSource reads its inputs through list_input, so every
// front door sees the same files.
#include <sys/stat.h>
#include <sys/types.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "readers/input_stream.hpp"
#include "trajcheck/input.hpp"
#include "trajcheck/record_shape.hpp"

namespace trajcheck {

namespace {

const char* special_kind(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::fifo: return "a FIFO";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::block:
    case std::filesystem::file_type::character: return "a device";
    default: return "not a regular file";
  }
}

// Claude Code 2.x writes, beside each subagent's transcript
// `<session>/subagents/agent-<id>.jsonl`, a meta file `agent-<id>.meta.json` (the call that
// started the subagent, its type): not a trace, it is read with the transcript
// (session_reader.cpp). The transcript's path for a meta file's, else empty.
std::string subagent_transcript_of(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  constexpr std::string_view suffix = ".meta.json";
  if (name.size() <= suffix.size() + 6 || name.compare(0, 6, "agent-") != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
      p.parent_path().filename() != "subagents")
    return {};
  return (p.parent_path() / (name.substr(0, name.size() - suffix.size()) + ".jsonl")).string();
}

// What a subagent meta file in a listing stands for: nothing when its transcript is there (it
// is read with it), else a skipped entry that says why.
bool skip_subagent_meta(const std::filesystem::path& p, std::vector<InputEntry>& found, bool named) {
  std::string transcript = subagent_transcript_of(p);
  if (transcript.empty()) return false;
  std::error_code ec;
  bool there = std::filesystem::is_regular_file(transcript, ec);
  std::string file = std::filesystem::path(transcript).filename().string();
  if (!there)
    found.push_back({p.string(), InputEntry::Kind::skipped,
                     fmt::format("a Claude Code subagent's meta file without its transcript {}: not a trace, skipped", file)});
  else if (named)
    found.push_back({p.string(), InputEntry::Kind::skipped,
                     fmt::format("a Claude Code subagent's meta file: not a trace, read with its transcript {}; skipped", file)});
  return true;
}

// Walks `root` (symbolic links to directories are not followed, so a cycle cannot loop). An
// unreadable subdirectory is one unreadable entry; the files beside it are still listed.
std::vector<InputEntry> list_directory(const std::string& root) {
  namespace fs = std::filesystem;
  using Kind = InputEntry::Kind;
  std::vector<InputEntry> found;
  std::vector<std::string> todo{root};
  while (!todo.empty()) {
    std::string dir = std::move(todo.back());
    todo.pop_back();
    std::error_code ec;
    fs::directory_iterator it(dir, ec), stop;
    for (; !ec && it != stop; it.increment(ec)) {
      std::string p = it->path().string();
      std::error_code lec, sec;
      fs::file_status link = it->symlink_status(lec);
      fs::file_status st = it->status(sec);
      if (fs::is_symlink(link) && (sec || !fs::exists(st))) {
        found.push_back({p, Kind::skipped, "dangling symbolic link, skipped"});
      } else if (fs::is_directory(st)) {
        if (!fs::is_symlink(link)) todo.push_back(std::move(p));
      } else if (fs::is_regular_file(st)) {
        if (is_trace_file_name(p) && !skip_subagent_meta(it->path(), found, false))
          found.push_back({std::move(p), Kind::file, {}});
      } else if (!sec && !lec) {
        found.push_back({p, Kind::skipped, fmt::format("{}, skipped", special_kind(st.type()))});
      } else {
        found.push_back({p, Kind::unreadable, fmt::format("cannot read: {}", (sec ? sec : lec).message())});
      }
    }
    if (ec) found.push_back({dir, Kind::unreadable, fmt::format("cannot read directory: {}", ec.message())});
  }
  std::sort(found.begin(), found.end(), [](const InputEntry& a, const InputEntry& b) { return a.path < b.path; });
  return found;
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

}  // namespace

bool is_trace_file_name(std::string_view path) {
  using detail::has_extension;
  return has_extension(path, ".jsonl") || has_extension(path, ".json") || has_extension(path, ".ndjson") ||
         has_extension(path, ".eval");
}

std::vector<InputEntry> list_input(const std::string& input) {
  using Kind = InputEntry::Kind;
  if (input == "-") return {{input, Kind::standard_input, {}}};
  struct stat st {};
  if (::stat(input.c_str(), &st) != 0)
    return {{input, Kind::unreadable, fmt::format("cannot open file: {}", std::strerror(errno))}};
  if (S_ISDIR(st.st_mode)) return list_directory(input);
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) return {{input, Kind::unreadable, "not a regular file"}};
  if (std::vector<InputEntry> meta; skip_subagent_meta(input, meta, true)) return meta;
  return {{input, Kind::file, {}}};
}

std::vector<InputEntry> list_inputs(const std::vector<std::string>& inputs) {
  std::vector<InputEntry> out;
  for (const std::string& in : inputs)
    for (InputEntry& e : list_input(in)) out.push_back(std::move(e));
  return out;
}

std::string_view to_string(FileLayout l) {
  switch (l) {
    case FileLayout::lines: return "lines";
    case FileLayout::compressed_lines: return "compressed_lines";
    case FileLayout::document: return "document";
    case FileLayout::archive: return "archive";
    case FileLayout::session_log: return "session_log";
    case FileLayout::unreadable: return "unreadable";
  }
  return "?";
}

namespace {

// Whether the first record of a JSONL file is an OTLP export request ("resourceSpans" in its
// first line, as far as the first 64 KiB go): the spans of one trace may then be anywhere in
// the file, and a piece of it would check parts of traces (docs/traces.md).
bool otlp_lines(const std::string& path, InputFormat format) {
  if (format == InputFormat::otel) return true;
  if (format != InputFormat::auto_detect) return false;
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return false;
  std::string head(std::size_t{1} << 16, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), f.get()));
  std::size_t start = head.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || head[start] != '{') return false;
  std::size_t nl = head.find('\n', start);
  return mentions_shape_key(std::string_view(head).substr(start, nl == std::string::npos ? std::string::npos : nl - start),
                            shape_key_bits::resource_spans);
}

}  // namespace

std::vector<InputPiece> split_entry(const InputEntry& entry, std::uint64_t piece_bytes, InputFormat format) {
  std::vector<InputPiece> out;
  struct stat st {};
  bool cut = piece_bytes > 0 && entry.kind == InputEntry::Kind::file && ::stat(entry.path.c_str(), &st) == 0 &&
             S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > piece_bytes &&
             file_layout(entry.path, format) == FileLayout::lines && !otlp_lines(entry.path, format);
  if (!cut) {
    out.push_back(InputPiece{entry, false, 0, 0, 0});
    return out;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  for (std::uint64_t s = 0; s < size; s += piece_bytes)
    out.push_back(InputPiece{entry, true, s, std::min(size, s + piece_bytes), 0});
  return out;
}

std::int64_t count_newlines(const std::string& path, std::uint64_t start, std::uint64_t end) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f || ::fseeko(f.get(), static_cast<off_t>(start), SEEK_SET) != 0) return -1;
  std::vector<char> buf(std::size_t{1} << 20);
  std::uint64_t left = end > start ? end - start : 0, n = 0;
  while (left > 0) {
    std::size_t got = std::fread(buf.data(), 1, std::min<std::uint64_t>(left, buf.size()), f.get());
    if (got == 0) break;
    n += static_cast<std::uint64_t>(std::count(buf.data(), buf.data() + got, '\n'));
    left -= got;
  }
  if (std::ferror(f.get())) return -1;
  return static_cast<std::int64_t>(n);
}

void set_lines_before(std::vector<InputPiece>& pieces, const std::vector<std::int64_t>& counts) {
  std::uint64_t before = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    InputPiece& p = pieces[i];
    if (!p.ranged) continue;
    if (p.start == 0) before = 0;
    p.lines_before = before;
    std::int64_t n = i < counts.size() ? counts[i] : 0;
    before += n > 0 ? static_cast<std::uint64_t>(n) : 0;
  }
}

}  // namespace trajcheck
