// trajcheck/input.hpp — the input layer: which files a list of inputs stands for, how each file
// is laid out, and how a corpus is cut into pieces that can be read independently (on other
// threads, processes or machines) and still give, together, exactly the records one
// RecordSource gives for the whole.
//
//   for (const trajcheck::InputEntry& e : trajcheck::list_inputs({"traces/", "more.jsonl.gz"}))
//     for (trajcheck::InputPiece& p : trajcheck::split_entry(e, 64 << 20))
//       pieces.push_back(std::move(p));        // a large plain JSONL file: several byte ranges
//   // … each piece read on its own, after its line numbers are known (count_newlines):
//   trajcheck::RecordSource src(std::move(piece));
//
// Every front door — the command line, the Python module, the Dask runner — reads its inputs
// through these functions, so a folder holds the same files for all of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "trajcheck/reader.hpp"

namespace trajcheck {

// One entry of an input listing: a file to read, or what stands in its place.
struct InputEntry {
  enum class Kind : std::uint8_t {
    file,            // a file to read
    standard_input,  // "-"
    unreadable,      // cannot be read (missing, a directory that cannot be listed, not a regular
                     // file): one rejected record at path:1:1 saying `message`
    skipped,         // a FIFO, socket, device or dangling link met inside a directory: one
                     // located warning at path:1:1 saying `message`, not a record
  };
  std::string path;
  Kind kind = Kind::file;
  std::string message;  // unreadable, skipped: why

  friend bool operator==(const InputEntry&, const InputEntry&) = default;
};

// Whether a directory listing picks a file of this name: `.jsonl`, `.ndjson`, `.json` and `.eval`,
// each also with a `.gz`, `.zst` or `.zstd` suffix.
bool is_trace_file_name(std::string_view path);

// What one input stands for, in reading order: "-" itself; a directory's trace files
// (is_trace_file_name), recursively (symbolic links to directories are not followed), sorted
// by their paths' bytes, with its unreadable subdirectories and skipped entries in their place;
// any other path itself (a file named on the command line is read whatever its name), or an
// unreadable entry when it cannot be read.
std::vector<InputEntry> list_input(const std::string& input);
// list_input of each input, in order.
std::vector<InputEntry> list_inputs(const std::vector<std::string>& inputs);

// How RecordSource reads a file.
enum class FileLayout : std::uint8_t {
  lines,             // uncompressed JSONL: each line a record; the only layout cut into byte ranges
  compressed_lines,  // gzip or zstd JSONL (told by the first bytes, whatever the name): one stream
  document,          // `.json`: one record or an array of records, read whole
  archive,           // `.eval`: an Inspect AI log, one record per sample
  session_log,       // JSONL whose lines are one coding-agent session, read whole
  unreadable,        // cannot be opened: read whole, so that the error is reported once
};
std::string_view to_string(FileLayout l);
// The layout of the file at `path` read under `format` (InputFormat::session reads every JSONL
// file as a session log). Reads at most the file's first kRecordHeadBytes bytes.
FileLayout file_layout(const std::string& path, InputFormat format = InputFormat::auto_detect);

// A piece of the input that RecordSource reads on its own. A whole entry, or (`ranged`) the
// lines of an uncompressed JSONL file that start in the byte range [start, end): a piece whose
// first byte is not at a line start skips to the next line, and the last line it owns is read
// to its end, even past `end`. So the ranges of a file give every record exactly once, wherever
// the cuts fall. `lines_before` (the '\n' bytes before `start`: count_newlines) gives its
// records the line numbers a whole read gives them.
struct InputPiece {
  InputEntry entry;
  bool ranged = false;
  std::uint64_t start = 0, end = 0;
  std::uint64_t lines_before = 0;

  friend bool operator==(const InputPiece&, const InputPiece&) = default;
};

// The pieces of one entry, in reading order: byte ranges of about `piece_bytes` for an
// uncompressed JSONL file larger than that (their `lines_before` still 0: count them), the whole
// entry otherwise (compressed files, `.json`, `.eval`, session logs, what cannot be read, and
// OTLP JSONL — a first line with "resourceSpans" — whose traces' spans are joined across lines).
// `piece_bytes` 0 never cuts.
std::vector<InputPiece> split_entry(const InputEntry& entry, std::uint64_t piece_bytes,
                                    InputFormat format = InputFormat::auto_detect);

// The '\n' bytes in [start, end) of a file (fewer when it is shorter); -1 when it cannot be read.
std::int64_t count_newlines(const std::string& path, std::uint64_t start, std::uint64_t end);

// Sets `lines_before` of each range of `pieces` from the counts of the ranges before it in the
// same file: `counts[i]` is count_newlines over pieces[i]'s range (a negative count, an
// unreadable file, counts 0). For callers that counted elsewhere (on other machines).
void set_lines_before(std::vector<InputPiece>& pieces, const std::vector<std::int64_t>& counts);

}  // namespace trajcheck
