// RecordSource: turns files, directories and standard input into records. JSONL streams
// through a fixed buffer (memory does not grow with file size); a .json file is read whole
// and split into array elements with their own line numbers. Compressed input is decoded on
// the way in (readers/input_stream.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include "readers/input_stream.hpp"
#include "readers/json_util.hpp"
#include "trajcheck/input.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/record_shape.hpp"

namespace trajcheck {

namespace {

constexpr std::size_t kReadBuffer = kRecordReadBuffer;
// A block read ahead (RecordSource::read_ahead) holds its bytes after kAheadRoom free bytes,
// where the end of a line begun in the block before is copied, in front of the line's rest.
// Lines longer than that are copied out of the blocks whatever way they are read (read_line).
constexpr std::size_t kAheadRoom = kReadBuffer / 2;
// Every read block is this large, so that any of them can be read into either way.
constexpr std::size_t kBlockBytes = kAheadRoom + kReadBuffer + kRecordPadding;
// How many blocks may be read ahead of the one lines are taken from: a batch's worth of the
// pipeline (kBatchBytes), so that a worker finds the bytes of its next batch read. Reading
// further ahead does not read sooner, but puts more blocks in turn, each a page fault every
// 4 KiB the first time and out of the caches when it comes round again: check -j 2 with 8
// blocks ahead and batches of 1 MiB took 6 % longer on tau-like traces, 5 % on bench data.
constexpr std::size_t kAheadBlocks = 2;

// A descriptor closed by its last holder: a thread reading ahead keeps the file open while
// the source moves on to the next one.
struct FileDescriptor {
  int fd;
  explicit FileDescriptor(int f) : fd(f) {}
  ~FileDescriptor() { ::close(fd); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
};

// Up to `n` bytes of `fd` from `offset` into `buf`, fewer only at the end of the file or on an
// error (*error set).
std::size_t read_at(int fd, char* buf, std::size_t n, std::uint64_t offset, std::string* error) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t k = ::pread(fd, buf + got, n - got, static_cast<off_t>(offset + got));
    if (k < 0) {
      if (errno == EINTR) continue;
      *error = fmt::format("read error: {}", std::strerror(errno));
      break;
    }
    if (k == 0) break;
    got += static_cast<std::size_t>(k);
  }
  return got;
}
constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

using detail::has_extension;

std::string size_text(std::uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// Top-level keys of the JSON object starting at text[0] ('{'), as raw (still escaped) text.
// A structural scan only: used to decide how to split a .json array, not to validate.
std::vector<std::string_view> object_keys(std::string_view text) {
  std::vector<std::string_view> keys;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      std::size_t start = ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (i >= text.size()) break;
      std::string_view s = text.substr(start, i - start);
      if (depth == 1) {
        std::size_t j = i + 1;
        while (j < text.size() && is_ws(text[j])) ++j;
        if (j < text.size() && text[j] == ':') keys.push_back(s);
      }
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
    }
  }
  return keys;
}

// Fills `buf` with up to `limit` bytes from the start of a stream (up to its end or an error);
// returns the bytes read.
std::size_t read_head(detail::InputStream& stream, char* buf, std::size_t limit, std::string& error) {
  std::size_t end = 0;
  while (end < limit) {
    std::size_t n = stream.read(buf + end, limit - end, error);
    if (n == 0) break;
    end += n;
  }
  return end;
}

// The shape-telling names among an object's keys (trajcheck/record_shape.hpp).
ShapeKeys shape_keys(const std::vector<std::string_view>& keys) {
  ShapeKeys bits = 0;
  for (std::string_view k : keys) bits |= shape_key(k);
  return bits;
}

// Whether the first bytes of a JSONL file are those of a coding-agent session log: a line in
// them (the last may be cut) has the session fields, and every line before it is an object
// with a "type" (Claude Code starts files with summary, snapshot and queue lines).
bool session_log_head(std::string_view head) {
  if (head.compare(0, kBom.size(), kBom) == 0) head.remove_prefix(kBom.size());
  for (std::size_t start = 0; start < head.size();) {
    std::size_t nl = head.find('\n', start);
    std::string_view ln = head.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    start = nl == std::string_view::npos ? head.size() : nl + 1;
    std::size_t b = 0;
    while (b < ln.size() && is_ws(ln[b])) ++b;
    if (b == ln.size()) continue;
    if (ln[b] != '{') return false;
    ShapeKeys keys = shape_keys(object_keys(ln.substr(b)));
    if (is_session_line(keys)) return true;
    if (!(keys & shape_key_bits::type)) return false;
  }
  return false;
}

// Whether a line is one JSON object as far as its brackets and quotes go (what a session log
// needs of each line to join them into one array).
bool balanced_object(std::string_view ln) {
  std::size_t i = 0;
  while (i < ln.size() && is_ws(ln[i])) ++i;
  if (i == ln.size() || ln[i] != '{') return false;
  int depth = 0;
  for (; i < ln.size(); ++i) {
    char c = ln[i];
    if (c == '"') {
      for (++i; i < ln.size() && ln[i] != '"'; ++i)
        if (ln[i] == '\\') ++i;
      if (i >= ln.size()) return false;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;
      if (depth < 0) return false;
    }
  }
  if (i == ln.size() || ln[i] != '}') return false;
  for (++i; i < ln.size(); ++i)
    if (!is_ws(ln[i])) return false;
  return true;
}

// Lines up to this size are validated whole before they join a session (simdjson's DOM
// parser holds about 14 bytes per input byte); a longer one is checked for its brackets,
// quotes and UTF-8 only, and the parser finds the rest.
constexpr std::size_t kValidatedSessionLine = std::size_t(4) << 20;

// Whether a line can join a session log's array: one JSON object, valid throughout.
bool session_line(simdjson::dom::parser& parser, std::string_view ln) {
  if (ln.size() > kValidatedSessionLine)
    return balanced_object(ln) && detail::find_invalid_utf8(ln) == std::string_view::npos;
  simdjson::dom::object o;
  return !parser.parse(ln.data(), ln.size()).get_object().get(o);
}

// Whether a .json file whose top level is an array holding `first` as its first element is
// one trajectory (an array of messages or tool names, or the lines of a session log) rather
// than an array of records.
bool array_is_one_record(std::string_view first) {
  if (first.empty()) return false;
  if (first.front() == '"') return true;
  if (first.front() != '{') return false;
  std::vector<std::string_view> keys = object_keys(first);
  if (is_session_line(shape_keys(keys))) return true;
  // The first of a message's "role" and a record's names decides; else a tool entry or a
  // LangChain message ({"type": "human", "data": {…}}: messages_to_dict) is one.
  ShapeKeys seen = 0;
  for (std::string_view k : keys) {
    ShapeKeys bit = shape_key(k);
    if (bit & shape_key_bits::role) return true;
    if (bit & shape_key_bits::record) return false;
    seen |= bit;
  }
  return (seen & (shape_key_bits::tool_name | shape_key_bits::message_data)) != 0;
}

}  // namespace

struct RecordSource::Impl {
  struct Element {
    Element(std::size_t off, std::size_t len, std::uint64_t line, std::uint64_t column)
        : off(off), len(len), line(line), column(column) {}
    std::size_t off = 0, len = 0;
    std::uint64_t line = 1, column = 1;
    std::string error;   // non-empty: a rejected record at line:column of the file
    bool in_rest = false;  // its text is in whole_rest, not whole
  };
  enum class Mode { none, lines, whole, archive };

  std::vector<std::string> inputs;  // listed one at a time (list_input), as they are reached
  InputFormat format = InputFormat::auto_detect;
  std::size_t next_input = 0;
  std::deque<InputPiece> pieces;  // still to read
  std::uint64_t record_index = 0;

  Mode mode = Mode::none;
  std::string name;
  // lines
  detail::InputStream stream;
  // kReadBuffer bytes are read at a time; the padding past them makes every line in it
  // readable as simdjson reads (kRecordPadding past its end), so a line can be lent. Records
  // lent with RawRecord::may_share hold the block: while any does, the next read goes to a
  // new block (writable()), and the block is freed with the last record holding it.
  SharedBlock block = SharedBlock::make(kBlockBytes);
  // Blocks left for a new one while records held them, oldest first: reused once none does
  // (records are let go of roughly in the order they were read), rather than freed and
  // allocated again, which cost a page fault for every 4 KiB of them. At most kKeptBlocks.
  std::deque<SharedBlock> kept;
  static constexpr std::size_t kKeptBlocks = 128;
  // Reading ahead (read_ahead): a plain regular file read as lines is read in blocks of
  // kReadBuffer bytes at consecutive offsets with pread, each claimed by one thread and read
  // outside any lock the caller holds, and taken in file order by next(). Shared with the
  // threads reading ahead, under `mu`; `reading_ahead` is next()'s own.
  struct Ahead {
    std::uint64_t offset = 0;
    SharedBlock block;  // the bytes from block.data() + kAheadRoom
    std::size_t got = 0;
    std::string error;
    bool ready = false;      // read (got, error set)
    bool abandoned = false;  // no longer wanted: its block goes back to `free` once read
  };
  struct AheadState {
    std::mutex mu;
    std::condition_variable read;
    std::shared_ptr<FileDescriptor> file;  // the file read ahead; null when none
    std::uint64_t next = 0;                // the offset of the next block to claim
    bool at_end = false;                   // a block came back short: nothing to claim past it
    std::deque<std::shared_ptr<Ahead>> claimed;  // in file order
    std::vector<SharedBlock> free;         // blocks no one holds, to read into
  } ahead;
  bool reading_ahead = false;
  std::size_t pos = 0, end = 0;
  bool eof = false;
  std::uint64_t line = 0;
  // The file offset of buf[0], and where a byte range's lines stop starting (a whole file: never).
  std::uint64_t base = 0, range_end = UINT64_MAX;
  std::string pending_error;  // met while the first bytes were looked at; reported in turn
  // archive: an open .eval log
  struct archive* archive = nullptr;
  // whole
  std::string whole;
  std::string whole_rest;  // a session log's lines that stay out of its array
  simdjson::dom::parser line_parser{kValidatedSessionLine};  // a session log's lines, checked one by one
  std::vector<Element> elements;
  std::size_t next_element = 0;

  ~Impl() { close(); }

  // The read buffer, made writable: a new block when records lent from the current one still
  // hold it, with the `keep` bytes from `keep_from` (a line begun in the current block) copied
  // to its front; else the current one, those bytes moved to its front.
  char* writable(std::size_t keep_from = 0, std::size_t keep = 0) {
    if (!block.exclusive()) {
      SharedBlock fresh;
      if (!kept.empty() && kept.front().exclusive()) {
        fresh = std::move(kept.front());
        kept.pop_front();
      } else {
        fresh = SharedBlock::make(kBlockBytes);
      }
      if (keep) std::memcpy(fresh.data(), block.data() + keep_from, keep);
      if (kept.size() < kKeptBlocks) kept.push_back(std::move(block));
      block = std::move(fresh);
    } else if (keep && keep_from) {
      std::memmove(block.data(), block.data() + keep_from, keep);
    }
    return block.data();
  }

  void close() {
    if (reading_ahead) stop_ahead();
    stream.close();
    close_archive();
    mode = Mode::none;
  }

  // Claims the next block to read ahead; under ahead.mu.
  std::shared_ptr<Ahead> claim_block() {
    auto a = std::make_shared<Ahead>();
    a->offset = ahead.next;
    ahead.next += kReadBuffer;
    if (!ahead.free.empty()) {
      a->block = std::move(ahead.free.back());
      ahead.free.pop_back();
    } else {
      a->block = SharedBlock::make(kBlockBytes);
    }
    ahead.claimed.push_back(a);
    return a;
  }
  // Reads a claimed block, outside ahead.mu, and files it as read.
  void read_block(Ahead& a, int fd) {
    std::string error;
    const std::size_t got = read_at(fd, a.block.data() + kAheadRoom, kReadBuffer, a.offset, &error);
    {
      std::lock_guard<std::mutex> lk(ahead.mu);
      a.got = got;
      a.error = std::move(error);
      a.ready = true;
      if (a.abandoned) {
        if (ahead.free.size() < kAheadBlocks) ahead.free.push_back(std::move(a.block));
      } else if (got < kReadBuffer) {
        ahead.at_end = true;
      }
    }
    ahead.read.notify_all();
  }
  // Hands a block no longer read from back: to be read into again when no record holds it.
  void recycle(SharedBlock b) {
    if (!b.exclusive()) {
      if (kept.size() < kKeptBlocks) kept.push_back(std::move(b));
      return;
    }
    std::lock_guard<std::mutex> lk(ahead.mu);
    if (ahead.free.size() < kAheadBlocks) ahead.free.push_back(std::move(b));
  }
  // The kept blocks no record holds any more, oldest first, made free to read into; under
  // ahead.mu, on next()'s thread (which alone touches `kept`).
  void reclaim_kept() {
    while (!kept.empty() && kept.front().exclusive() && ahead.free.size() < kAheadBlocks) {
      ahead.free.push_back(std::move(kept.front()));
      kept.pop_front();
    }
  }

  // Starts reading the open stream ahead from `offset`, when it is a plain regular file.
  void start_ahead(std::uint64_t offset) {
    const int fd = stream.plain_file_descriptor();
    if (fd < 0) return;
    const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) return;  // read in turn instead
    std::lock_guard<std::mutex> lk(ahead.mu);
    ahead.file = std::make_shared<FileDescriptor>(own);
    ahead.next = offset;
    ahead.at_end = false;
    reading_ahead = true;
  }
  void stop_ahead() {
    std::lock_guard<std::mutex> lk(ahead.mu);
    for (auto& a : ahead.claimed) {
      if (!a->ready) a->abandoned = true;
      else if (ahead.free.size() < kAheadBlocks) ahead.free.push_back(std::move(a->block));
    }
    ahead.claimed.clear();
    ahead.file.reset();
    reading_ahead = false;
  }

  // Reads blocks ahead until kAheadBlocks are claimed; any thread, while next() runs.
  void read_ahead() {
    for (;;) {
      std::shared_ptr<Ahead> a;
      std::shared_ptr<FileDescriptor> file;
      {
        std::lock_guard<std::mutex> lk(ahead.mu);
        if (!ahead.file || ahead.at_end || ahead.claimed.size() >= kAheadBlocks) return;
        a = claim_block();
        file = ahead.file;
      }
      read_block(*a, file->fd);
    }
  }

  // Makes the block read ahead from file offset `offset` the read buffer (read here when no
  // thread has claimed it), with the `keep` bytes from `keep_from` of the current one (a line
  // begun there) copied in front of its bytes; sets pos, end and base. Returns the bytes read.
  std::size_t take_block(std::uint64_t offset, std::size_t keep_from, std::size_t keep, std::string* error) {
    std::shared_ptr<Ahead> a;
    {
      std::unique_lock<std::mutex> lk(ahead.mu);
      reclaim_kept();
      if (!ahead.claimed.empty() && ahead.claimed.front()->offset != offset) {
        // Read past a short block (the file grew meanwhile): read on from where lines stopped.
        for (auto& c : ahead.claimed) {
          if (!c->ready) c->abandoned = true;
          else if (ahead.free.size() < kAheadBlocks) ahead.free.push_back(std::move(c->block));
        }
        ahead.claimed.clear();
      }
      if (ahead.claimed.empty()) {
        ahead.next = offset;
        ahead.at_end = false;
        a = claim_block();
        std::shared_ptr<FileDescriptor> file = ahead.file;
        lk.unlock();
        read_block(*a, file->fd);
        lk.lock();
      } else {
        a = ahead.claimed.front();
        ahead.read.wait(lk, [&] { return a->ready; });
      }
      ahead.claimed.pop_front();
    }
    SharedBlock old = std::exchange(block, std::move(a->block));
    if (keep) std::memcpy(block.data() + kAheadRoom - keep, old.data() + keep_from, keep);
    recycle(std::move(old));
    base = offset - kAheadRoom;
    pos = kAheadRoom - keep;
    end = kAheadRoom + a->got;
    if (!a->error.empty()) *error = std::move(a->error);
    return a->got;
  }

  // A skipped directory entry: handed out as a record that only carries its warning.
  void emit_skip(RawRecord& out, const std::string& file_name, const std::string& message) {
    out.text.clear();
    out.container_error.clear();
    out.origin = RecordOrigin{file_name, 1, 1, record_index};
    out.skip_warning = fmt::format("{}:1:1: warning: {}", file_name, message);
  }

  void emit_error(RawRecord& out, const std::string& file_name, std::uint64_t ln, std::uint64_t col,
                  std::string message) {
    out.text.clear();
    out.origin = RecordOrigin{file_name, ln, col, record_index++};
    out.container_error = std::move(message);
  }

  void emit_text(RawRecord& out, std::string_view text, std::uint64_t ln, std::uint64_t col) {
    out.text.assign(text);
    out.origin = RecordOrigin{name, ln, col, record_index++};
    out.container_error.clear();
  }

  // Reads one line into `text`, or, with `lent`, sets *lent to the line where it lies whole in
  // the read buffer (`text` then left empty; a line begun near the end of one read may be
  // moved to the buffer's front and completed there by the next); false at end of file. *error set on a read error
  // or a broken compressed stream (the partial line is dropped), or when the line is longer
  // than detail::kMaxRecordBytes: the rest of that line is skipped and *too_long set, so
  // reading goes on.
  bool read_line(std::string& text, std::string_view* lent, std::string* error, bool* too_long) {
    text.clear();
    bool any = false, partial = false;
    *too_long = false;
    for (;;) {
      if (pos == end) {
        if (eof) return any;
        std::size_t got;
        if (reading_ahead) {
          got = take_block(base + end, 0, 0, error);
        } else {
          base += end;
          got = end = stream.read(writable(), kReadBuffer, *error);
          pos = 0;
        }
        if (got == 0 && error->empty()) error->swap(pending_error);
        if (got == 0) {
          eof = true;
          if (!error->empty()) return false;
          continue;
        }
      }
      any = true;
      const char* start = block.data() + pos;
      const void* nl = std::memchr(start, '\n', end - pos);
      std::size_t n = nl ? static_cast<const char*>(nl) - start : end - pos;
      if (lent && nl && !partial) {
        *lent = std::string_view(start, n);
        pos += n + 1;
        return true;
      }
      // A line that runs past the bytes read, for a caller that borrows: when its first part
      // fills at most half the buffer, it moves to the front (of a new block when records
      // still hold this one) and the rest is read behind it, so the line is lent whole
      // (copying it out instead costs a copy of all of it).
      if (lent && !nl && !partial && !eof && end - pos <= kReadBuffer / 2) {
        const std::size_t have = end - pos;
        std::size_t got;
        if (reading_ahead) {
          got = take_block(base + end, pos, have, error);
        } else {
          char* front = writable(pos, have);
          base += pos;
          pos = 0;
          got = stream.read(front + have, kReadBuffer - have, *error);
          end = have + got;
        }
        if (got == 0 && error->empty()) error->swap(pending_error);
        if (got == 0) {
          eof = true;
          if (!error->empty()) return false;
        }
        continue;
      }
      partial = true;
      if (!*too_long && text.size() + n > detail::kMaxRecordBytes) {
        *too_long = true;
        std::string().swap(text);
      }
      if (!*too_long) text.append(start, n);
      pos += nl ? n + 1 : n;
      if (nl) return true;
    }
  }

  bool next_line(RawRecord& out) {
    for (;;) {
      if (base + pos >= range_end) {  // the next line starts in a later range
        close();
        return false;
      }
      std::string error;
      bool too_long = false;
      std::string_view lent;
      if (!read_line(out.text, out.may_borrow || out.may_share ? &lent : nullptr, &error, &too_long)) {
        if (!error.empty()) {
          emit_error(out, name, line + 1, 1, error);
          close();
          return true;
        }
        close();
        return false;
      }
      ++line;
      if (too_long) {
        emit_error(out, name, line, 1, fmt::format("record is larger than the {} limit", size_text(detail::kMaxRecordBytes)));
        return true;
      }
      std::uint64_t col = 1;
      std::string_view l = lent.data() ? lent : std::string_view(out.text);
      std::size_t bom = line == 1 && l.compare(0, kBom.size(), kBom) == 0 ? kBom.size() : 0;
      l.remove_prefix(bom);
      col += bom;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      if (std::all_of(l.begin(), l.end(), is_ws)) continue;  // blank: not a record
      if (lent.data()) {
        out.borrowed = l;
        if (out.may_share) out.block = block;
      } else {
        out.text.resize(bom + l.size());
        out.text.erase(0, bom);
      }
      out.origin = RecordOrigin{name, line, col, record_index++};
      out.container_error.clear();
      return true;
    }
  }

  // Splits `whole` into records; returns a container error message, or empty.
  void split_whole(RawRecord& out, bool* error_emitted) {
    *error_emitted = false;
    elements.clear();
    next_element = 0;
    std::size_t base = 0;
    std::uint64_t col0 = 1;
    if (whole.compare(0, kBom.size(), kBom) == 0) {
      base = kBom.size();
      col0 += kBom.size();
    }
    std::string_view text(whole);
    std::size_t i = base;
    std::uint64_t ln = 1;
    std::size_t line_start = 0;  // offset of the current line (column = i - line_start + 1)
    auto column = [&](std::size_t at) { return ln == 1 ? at - base + col0 : at - line_start + 1; };
    auto skip_ws = [&] {
      while (i < text.size() && is_ws(text[i])) {
        if (text[i] == '\n') {
          ++ln;
          line_start = i + 1;
        }
        ++i;
      }
    };
    skip_ws();
    if (i == text.size()) {
      emit_error(out, name, 1, 1, "empty file: no JSON value");
      *error_emitted = true;
      return;
    }
    if (text[i] != '[' || format == InputFormat::session) {
      elements.push_back(Element{base, text.size() - base, 1, col0});
      return;
    }
    ++i;
    for (;;) {
      skip_ws();
      if (i < text.size() && text[i] == ']' && elements.empty()) {
        ++i;
        break;
      }
      Element el{i, 0, ln, column(i)};
      int depth = 0;
      bool closed = false;
      while (i < text.size()) {
        char c = text[i];
        if (c == '"') {
          for (++i; i < text.size() && text[i] != '"'; ++i) {
            if (text[i] == '\\') ++i;
            else if (text[i] == '\n') { ++ln; line_start = i + 1; }
          }
          ++i;
          continue;
        }
        if (c == '\n') {
          ++ln;
          line_start = i + 1;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          break;
        }
        ++i;
      }
      if (i > text.size()) i = text.size();
      std::size_t stop = i;
      while (stop > el.off && is_ws(text[stop - 1])) --stop;
      el.len = stop - el.off;
      elements.push_back(el);
      if (i >= text.size()) {
        // Truncated: the last element goes to the parser, which says where it breaks.
        elements.back().len = text.size() - el.off;
        return;
      }
      if (text[i] == ',') {
        ++i;
        continue;
      }
      if (text[i] == ']') {
        ++i;
        closed = true;
      }
      (void)closed;
      break;
    }
    skip_ws();
    bool trailing = i < text.size();
    if (!elements.empty() && array_is_one_record(text.substr(elements[0].off, elements[0].len))) {
      elements.clear();
      elements.push_back(Element{base, text.size() - base, 1, col0});
      return;  // the parser reports any trailing content itself
    }
    if (trailing) {
      // Reported after the elements before it, as one more rejected record.
      Element bad{i, text.size() - i, ln, column(i)};
      bad.len = std::string_view::npos;  // marker: container error
      elements.push_back(bad);
    }
  }

  bool next_whole(RawRecord& out) {
    if (next_element >= elements.size()) {
      std::string().swap(whole_rest);
      mode = Mode::none;
      return false;
    }
    const Element& el = elements[next_element++];
    if (!el.error.empty()) {
      emit_error(out, name, el.line, el.column, el.error);
      return true;
    }
    if (el.len == std::string_view::npos) {
      emit_error(out, name, el.line, el.column, "invalid JSON: unexpected content after the top-level array");
      return true;
    }
    if (el.in_rest) {
      emit_text(out, std::string_view(whole_rest).substr(el.off, el.len), el.line, el.column);
    } else if (el.off == 0 && el.len == whole.size()) {
      out.text.swap(whole);  // the whole text is one record (a session log, a .json file): moved, not copied
      out.origin = RecordOrigin{name, el.line, el.column, record_index++};
      out.container_error.clear();
      std::string().swap(whole);
    } else {
      emit_text(out, std::string_view(whole).substr(el.off, el.len), el.line, el.column);
    }
    return true;
  }

  // An Inspect AI `.eval` log: a zip archive whose samples/*.json members are one record
  // each (the sample's origin is "<log>/<member>"); its other members (header, summaries,
  // journal) describe the whole eval. Members are read one at a time, each up to the record
  // limit (its declared size is checked first; reading stops at the limit whatever it says),
  // so memory follows one sample, not the archive's expanded size.
  bool open_archive(const std::string& path, RawRecord& out) {
    archive = archive_read_new();
    archive_read_support_format_zip(archive);
    archive_read_support_filter_all(archive);
    if (archive_read_open_filename(archive, path.c_str(), 1 << 16) != ARCHIVE_OK) {
      emit_error(out, path, 1, 1, fmt::format("cannot read archive: {}", archive_error_string(archive)));
      close_archive();
      return true;
    }
    mode = Mode::archive;
    return false;
  }

  void close_archive() {
    if (archive) archive_read_free(archive);
    archive = nullptr;
  }

  bool next_member(RawRecord& out) {
    struct archive_entry* entry;
    for (;;) {
      int r = archive_read_next_header(archive, &entry);
      if (r != ARCHIVE_OK) {  // the end, or the archive breaks: its error is one more record
        if (r != ARCHIVE_EOF) emit_error(out, name, 1, 1, fmt::format("read error: {}", archive_error_string(archive)));
        close_archive();
        mode = Mode::none;
        return r != ARCHIVE_EOF;
      }
      std::string member = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
      if (member.rfind("samples/", 0) != 0 || !has_extension(member, ".json")) {
        archive_read_data_skip(archive);
        continue;
      }
      std::string where = fmt::format("{}/{}", name, member);
      const std::string too_large = fmt::format("record is larger than the {} limit", size_text(detail::kMaxRecordBytes));
      if (archive_entry_size_is_set(entry) && archive_entry_size(entry) > static_cast<la_int64_t>(detail::kMaxRecordBytes)) {
        archive_read_data_skip(archive);
        emit_error(out, where, 1, 1, too_large);
        return true;
      }
      out.text.clear();
      char chunk[1 << 16];
      la_ssize_t n;
      while ((n = archive_read_data(archive, chunk, sizeof chunk)) > 0) {
        if (out.text.size() + static_cast<std::size_t>(n) > detail::kMaxRecordBytes) {
          std::string().swap(out.text);
          archive_read_data_skip(archive);
          emit_error(out, where, 1, 1, too_large);
          return true;
        }
        out.text.append(chunk, static_cast<std::size_t>(n));
      }
      if (n < 0) {
        emit_error(out, where, 1, 1, fmt::format("read error: {}", archive_error_string(archive)));
        return true;
      }
      out.origin = RecordOrigin{std::move(where), 1, 1, record_index++};
      out.container_error.clear();
      return true;
    }
  }

  // Reads the whole (decompressed) file into `whole`, up to detail::kMaxJsonFileBytes.
  bool read_whole(std::string* error) try {
    whole.clear();
    std::vector<char> chunk(kReadBuffer);
    for (;;) {
      std::size_t n = stream.read(chunk.data(), chunk.size(), *error);
      if (n == 0) return error->empty();
      if (whole.size() + n > detail::kMaxJsonFileBytes) {
        *error = fmt::format("a .json file is read whole and this one is larger than the {} limit; "
                             "write it as JSONL (one record per line)", size_text(detail::kMaxJsonFileBytes));
        std::string().swap(whole);
        return false;
      }
      whole.append(chunk.data(), n);
    }
  } catch (const std::bad_alloc&) {
    *error = fmt::format("not enough memory to read this .json file whole ({} read)", size_text(whole.size()));
    std::string().swap(whole);
    return false;
  }

  // Opens a file; returns true if a record (an error) was emitted instead.
  bool open_file(const std::string& path, RawRecord& out) {
    name = path;
    if (has_extension(path, ".eval")) return open_archive(path, out);
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      emit_error(out, path, 1, 1, fmt::format("cannot open file: {}", std::strerror(errno)));
      return true;
    }
    stream.open(f, true);
    if (has_extension(path, ".json")) {
      std::string error;
      bool read = read_whole(&error);
      stream.close();
      if (!read) {
        emit_error(out, path, 1, 1, error);
        return true;
      }
      bool emitted = false;
      split_whole(out, &emitted);
      if (emitted) return true;
      mode = Mode::whole;
      return false;
    }
    return start_lines(out, true);
  }

  // Starts reading lines from the open stream, which is at file offset `offset`.
  void begin_lines(std::uint64_t offset, std::uint64_t lines_before, std::uint64_t stop) {
    pos = end = 0;
    eof = false;
    base = offset;
    line = lines_before;
    range_end = stop;
    pending_error.clear();
    mode = Mode::lines;
  }

  // Opens a byte range of a plain JSONL file (InputPiece::ranged) at its first line start;
  // true when an error record was emitted. Only the range at the start of the file reports a
  // file that cannot be opened (once, at line 1, as a whole read does); the others then hold
  // nothing, and so does a range whose skipped partial line meets a read error (the range
  // before it reports that).
  bool open_range(const InputPiece& p, RawRecord& out) {
    name = p.entry.path;
    const std::uint64_t from = p.start > 0 ? p.start - 1 : 0;
    std::FILE* f = std::fopen(name.c_str(), "rb");
    if (!f || (from > 0 && ::fseeko(f, static_cast<off_t>(from), SEEK_SET) != 0)) {
      int err = errno;
      if (f) std::fclose(f);
      if (p.start > 0) return false;
      emit_error(out, name, 1, 1, fmt::format("cannot open file: {}", std::strerror(err)));
      return true;
    }
    stream.open(f, true, /*detect=*/false);
    begin_lines(from, p.lines_before, p.end);
    if (p.start == 0) return false;
    // From the byte before the range: the range starts at a line start only when that byte is
    // '\n' (counted in lines_before); else the rest of that line belongs to an earlier range, and
    // its '\n' is one more line before this range's first.
    std::string skipped, error;
    bool too_long = false;
    if (!read_line(skipped, nullptr, &error, &too_long) || !error.empty()) {
      close();
      return false;
    }
    if (too_long || !skipped.empty()) ++line;
    return false;
  }

  // Starts reading the open stream as JSONL: its first bytes decide whether it is a session
  // log, read whole; else its lines are records. True when an error record was emitted.
  // A file (not standard input, which may start at any offset) is read ahead past its first
  // block when it is a plain regular file (start_ahead).
  bool start_lines(RawRecord& out, bool file) {
    begin_lines(0, 0, UINT64_MAX);
    end = read_head(stream, writable(), kReadBuffer, pending_error);
    if (format != InputFormat::session && !session_log_head(std::string_view(block.data(), std::min(end, kRecordHeadBytes)))) {
      if (file && end == kReadBuffer && pending_error.empty()) start_ahead(end);
      return false;
    }
    return read_session_log(out);
  }

  // A session log is one record, all its lines, made a JSON array whose elements keep their
  // file lines and columns: "[" takes column 0 of line 1, a comma ends each line but the last,
  // a BOM becomes three spaces. A line that is not one valid JSON object (cut short by a
  // crash, bytes that are not UTF-8, a colon missing) stays out of the array and is a record
  // of its own, which the parser rejects at its error, so that it costs the session nothing.
  // A read error is one more rejected record, at the line where it broke (the cut line before
  // it is dropped). The array is built as the file is read, a line at a time, and handed to
  // the parser without a copy: the file's text is held once.
  bool read_session_log(RawRecord& out) {
    std::string error;
    error.swap(pending_error);
    elements.clear();
    next_element = 0;
    std::string rest;  // the lines that stay out of the array, one after the other
    struct Bad {
      std::size_t off, len;
      std::uint64_t line, column;
    };
    std::vector<Bad> bad;
    whole.assign("[");
    std::size_t last_comma = std::string::npos;  // after the last line in the array
    std::uint64_t ln = 0;
    std::string partial;  // a line not ended yet in the bytes read so far
    std::size_t read_bytes = 0;
    // Takes the line `l` (without its '\n') into the array, or out of it.
    auto take = [&](std::string_view l) {
      ++ln;
      if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
      std::uint64_t col = 1;
      if (ln == 1 && l.compare(0, kBom.size(), kBom) == 0) {
        whole.append(kBom.size(), ' ');
        l.remove_prefix(kBom.size());
        col += kBom.size();
      }
      if (!std::all_of(l.begin(), l.end(), is_ws)) {
        if (session_line(line_parser, l)) {
          whole.append(l);
          last_comma = whole.size();
          whole.push_back(',');
        } else {
          bad.push_back(Bad{rest.size(), l.size(), ln, col});
          rest.append(l);
        }
      }
      whole.push_back('\n');
    };
    // Splits `bytes` into lines, the last kept in `partial` until its end is read.
    auto feed = [&](std::string_view bytes) {
      for (std::size_t start = 0; start < bytes.size();) {
        const void* nl = std::memchr(bytes.data() + start, '\n', bytes.size() - start);
        if (!nl) {
          partial.append(bytes.substr(start));
          return;
        }
        std::size_t stop = static_cast<const char*>(nl) - bytes.data();
        if (partial.empty()) {
          take(bytes.substr(start, stop - start));
        } else {
          partial.append(bytes.substr(start, stop - start));
          take(partial);
          partial.clear();
        }
        start = stop + 1;
      }
    };
    const std::string too_large = fmt::format("a session log is read whole and this one is larger than the {} limit",
                                              size_text(detail::kMaxJsonFileBytes));
    try {
      read_bytes = end;
      feed(std::string_view(block.data(), end));
      std::vector<char> chunk(error.empty() ? kReadBuffer : 0);
      while (error.empty()) {
        std::size_t n = stream.read(chunk.data(), chunk.size(), error);
        if (n == 0) break;
        if (read_bytes + n > detail::kMaxJsonFileBytes) {
          close();
          std::string().swap(whole);
          emit_error(out, name, 1, 1, too_large);
          return true;
        }
        read_bytes += n;
        feed(std::string_view(chunk.data(), n));
      }
      stream.close();
      if (error.empty() && !partial.empty()) take(partial);  // the last line, without a '\n'
      // (After a read error the cut line is dropped.)
      std::string().swap(partial);
      if (last_comma != std::string::npos) whole[last_comma] = ' ';  // the last line takes none
      whole.push_back(']');
      whole.reserve(whole.size() + kRecordPadding);  // parsed in place (RecordSource::next)
    } catch (const std::bad_alloc&) {
      close();
      std::string().swap(whole);
      std::string().swap(partial);
      emit_error(out, name, 1, 1, fmt::format("not enough memory to read this session log whole ({} read)",
                                              size_text(read_bytes)));
      return true;
    }
    if (last_comma != std::string::npos) elements.push_back(Element{0, whole.size(), 1, 0});
    for (const Bad& b : bad) {  // after the array, each line that stays out of it
      elements.push_back(Element{b.off, b.len, b.line, b.column});
      elements.back().in_rest = true;
    }
    if (!error.empty()) {
      elements.push_back(Element{0, 0, ln + 1, 1});
      elements.back().error = std::move(error);
    }
    whole_rest.swap(rest);
    mode = Mode::whole;
    return false;
  }

  bool next(RawRecord& out) {
    for (;;) {
      if (mode == Mode::lines && next_line(out)) return true;
      if (mode == Mode::whole && next_whole(out)) return true;
      if (mode == Mode::archive && next_member(out)) return true;
      if (pieces.empty()) {
        if (next_input >= inputs.size()) return false;
        for (InputEntry& e : list_input(inputs[next_input++]))
          pieces.push_back(InputPiece{std::move(e), false, 0, 0, 0});
        continue;
      }
      InputPiece p = std::move(pieces.front());
      pieces.pop_front();
      switch (p.entry.kind) {
        case InputEntry::Kind::skipped: emit_skip(out, p.entry.path, p.entry.message); return true;
        case InputEntry::Kind::unreadable: emit_error(out, p.entry.path, 1, 1, std::move(p.entry.message)); return true;
        case InputEntry::Kind::standard_input:
          name = "-";
          stream.open(stdin, false);
          if (start_lines(out, false)) return true;
          continue;
        case InputEntry::Kind::file:
          if (p.ranged ? open_range(p, out) : open_file(p.entry.path, out)) return true;
          continue;
      }
    }
  }
};

RecordSource::RecordSource(std::vector<std::string> inputs) : impl_(std::make_unique<Impl>()) {
  impl_->inputs = std::move(inputs);
}
RecordSource::RecordSource(std::vector<std::string> inputs, InputFormat format) : RecordSource(std::move(inputs)) {
  impl_->format = format;
}
RecordSource::RecordSource(std::vector<InputPiece> pieces, InputFormat format) : impl_(std::make_unique<Impl>()) {
  impl_->pieces.assign(std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
  impl_->format = format;
}
RecordSource::~RecordSource() = default;
RecordSource::RecordSource(RecordSource&&) noexcept = default;
RecordSource& RecordSource::operator=(RecordSource&&) noexcept = default;

FileLayout file_layout(const std::string& path, InputFormat format) {
  if (has_extension(path, ".eval")) return FileLayout::archive;
  if (has_extension(path, ".json")) return FileLayout::document;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return FileLayout::unreadable;
  detail::InputStream stream;
  stream.open(f, true);
  std::vector<char> head(kRecordHeadBytes);
  std::string error;
  std::size_t end = read_head(stream, head.data(), head.size(), error);
  if (format == InputFormat::session || session_log_head(std::string_view(head.data(), end)))
    return FileLayout::session_log;
  return stream.compressed() ? FileLayout::compressed_lines : FileLayout::lines;
}

void RecordSource::read_ahead() { impl_->read_ahead(); }

bool RecordSource::next(RawRecord& out) {
  out.skip_warning.clear();
  out.borrowed = {};
  out.block.reset();
  if (!impl_->next(out)) return false;
  // Spare capacity lets TraceParser hand the text to simdjson in place (see RawRecord).
  if (!out.borrowed.data() && out.text.capacity() < out.text.size() + kRecordPadding)
    out.text.reserve(out.text.size() + kRecordPadding);
  return true;
}

}  // namespace trajcheck
