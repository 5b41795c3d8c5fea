// RecordSource: JSONL streaming through a fixed buffer, .json array splitting with per-element
// positions, directories, stdin-like streams, and container errors.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "trajcheck/input.hpp"
#include "trajcheck/reader.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / fmt_name();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static std::string fmt_name() {
    static int n = 0;
    return "trajcheck_rs_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

std::vector<RawRecord> read_all(const std::vector<std::string>& inputs) {
  RecordSource src(inputs);
  std::vector<RawRecord> out;
  RawRecord r;
  while (src.next(r)) out.push_back(r);
  return out;
}
}  // namespace

TEST_CASE("jsonl: one record per line, blank lines skipped, CR stripped, positions kept") {
  TempDir d;
  std::string f = d.write("a.jsonl", "{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}");
  auto recs = read_all({f});
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].text == "{\"a\":1}");
  CHECK(recs[0].origin.line == 1);
  CHECK(recs[1].text == "{\"b\":2}");
  CHECK(recs[1].origin.line == 4);
  CHECK(recs[2].text == "{\"c\":3}");  // no final newline
  CHECK(recs[2].origin.line == 5);
  CHECK(recs[2].origin.record == 2);
  CHECK(recs[2].origin.file == f);
  CHECK(recs[2].container_error.empty());
}

TEST_CASE("jsonl: lines longer than the read buffer arrive whole") {
  TempDir d;
  std::string big(300000, 'x');
  std::string f = d.write("big.jsonl", "{\"s\":\"" + big + "\"}\n{\"t\":1}\n");
  auto recs = read_all({f});
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].text.size() == big.size() + 8);
  CHECK(recs[1].text == "{\"t\":1}");
  CHECK(recs[1].origin.line == 2);
}

TEST_CASE("jsonl: memory stays flat while streaming many records") {
  TempDir d;
  std::string body;
  for (int i = 0; i < 20000; ++i) body += "{\"trace_id\":\"t" + std::to_string(i) + "\",\"steps\":[]}\n";
  std::string f = d.write("many.jsonl", body);
  RecordSource src({f});
  RawRecord r;
  std::size_t n = 0, max_capacity = 0;
  while (src.next(r)) {
    ++n;
    max_capacity = std::max(max_capacity, r.text.capacity());
  }
  CHECK(n == 20000);
  CHECK(max_capacity < 256);  // the record buffer is reused, never the whole file
}

TEST_CASE("jsonl: a caller that may borrow gets the same records, lent from the read buffer where whole") {
  // Records of every size from a few bytes to longer than the read buffer, so that many lie
  // across two reads: a BOM, CRLF endings, blank lines and a last line with no newline.
  TempDir d;
  std::string body = "\xEF\xBB\xBF";
  std::uint64_t seed = 12345;
  auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int i = 0; i < 400; ++i) {
    std::size_t size = next() % 4 == 0 ? next() % 600000 : next() % 3000;
    body += R"({"trace_id":"t)" + std::to_string(i) + R"(","steps":[{"type":"tool_call","tool":"get","result":")" +
            std::string(size, static_cast<char>('a' + i % 26)) + R"("}]})";
    body += i % 5 == 0 ? "\r\n" : "\n";
    if (i % 9 == 0) body += "  \n";
  }
  body += R"({"trace_id":"last","steps":[]})";
  std::string f = d.write("sizes.jsonl", body);

  TraceParser parser(NormalizeOptions{});
  ToolTable tools;
  auto normalized = [&](const RawRecord& r) {
    Trajectory t(&tools);
    std::string out;
    ParseOutcome o = parser.parse(r, t, [&](Trajectory& tr) { write_normalized_json(tr, out); });
    REQUIRE(o.ok());
    return out;
  };
  std::vector<RawRecord> copied = read_all({f});
  REQUIRE(copied.size() == 401);
  RecordSource src({f});
  RawRecord r;
  r.may_borrow = true;
  std::size_t i = 0, lent = 0;
  while (src.next(r)) {
    REQUIRE(i < copied.size());
    const RawRecord& c = copied[i++];
    CHECK(c.borrowed.data() == nullptr);
    CHECK(r.bytes() == c.text);
    CHECK(r.origin.line == c.origin.line);
    CHECK(r.origin.column == c.origin.column);
    CHECK(r.origin.record == c.origin.record);
    if (r.borrowed.data()) {
      ++lent;
      CHECK(r.text.empty());
      CHECK(r.readable() >= r.bytes().size() + kRecordPadding);
      // The padding simdjson may read is there (AddressSanitizer checks the reads).
      unsigned sum = 0;
      for (std::size_t k = 0; k < kRecordPadding; ++k) sum += static_cast<unsigned char>(r.bytes().data()[r.bytes().size() + k]);
      (void)sum;
    }
    CHECK(normalized(r) == normalized(c));
  }
  CHECK(i == copied.size());
  CHECK(lent > 200);               // most records lie whole in one read
  CHECK(lent < copied.size() - 20);  // those longer than half the buffer, and the last, are copied
  CHECK(copied[0].origin.column == 4);  // the BOM is not part of the first record
}

TEST_CASE("jsonl: a line lent from the end of a full read still has its padding") {
  // A first line ending at each of the last bytes of the first read: the padding simdjson may
  // read past it lies beyond the bytes read (AddressSanitizer checks the reads).
  TempDir d;
  for (std::size_t gap = 0; gap <= kRecordPadding + 2; ++gap) {
    CAPTURE(gap);
    const std::size_t size = kRecordReadBuffer - 1 - gap;  // its newline is byte size
    std::string f = d.write("edge.jsonl", "\"" + std::string(size - 2, 'x') + "\"\n{\"b\":2}\n");
    RecordSource src({f});
    RawRecord r;
    r.may_borrow = true;
    REQUIRE(src.next(r));
    REQUIRE(r.borrowed.data() != nullptr);
    CHECK(r.bytes().size() == size);
    unsigned sum = 0;
    for (std::size_t k = 0; k < kRecordPadding; ++k) sum += static_cast<unsigned char>(r.bytes().data()[size + k]);
    (void)sum;
    REQUIRE(src.next(r));
    CHECK(r.bytes() == "{\"b\":2}");
    CHECK(r.origin.line == 2);
    CHECK(!src.next(r));
  }
}

TEST_CASE("jsonl: a line begun at the end of a read is lent whole when its first part is short") {
  // The first line fills the read buffer but for `tail` bytes, which begin the second line:
  // up to half a buffer, that part moves to the front and the next read completes the line.
  TempDir d;
  for (std::size_t tail : {std::size_t{1}, std::size_t{99}, kRecordReadBuffer / 2, kRecordReadBuffer / 2 + 1,
                           kRecordReadBuffer * 5 / 8}) {
    CAPTURE(tail);
    const std::size_t first = kRecordReadBuffer - tail;  // with its newline
    const std::string second = "\"" + std::string(kRecordReadBuffer * 3 / 4, 'y') + "\"";  // longer than any tail
    std::string f = d.write("tail.jsonl", "\"" + std::string(first - 3, 'x') + "\"\n" + second + "\n{\"c\":3}");
    RecordSource src({f});
    RawRecord r;
    r.may_borrow = true;
    REQUIRE(src.next(r));
    CHECK(r.bytes().size() == first - 1);
    REQUIRE(src.next(r));
    CHECK(r.bytes() == second);
    CHECK(r.origin.line == 2);
    CHECK((r.borrowed.data() != nullptr) == (tail <= kRecordReadBuffer / 2));
    if (r.borrowed.data()) CHECK(r.readable() >= r.bytes().size() + kRecordPadding);
    REQUIRE(src.next(r));
    CHECK(r.bytes() == "{\"c\":3}");  // the last line, with no newline
    CHECK(!src.next(r));
  }
}

TEST_CASE("json: an array of records is split, each element with its own line and column") {
  TempDir d;
  std::string f = d.write("arr.json", "[\n  {\"trace_id\": \"a\", \"steps\": []},\n  {\"trace_id\": \"b,]\",\n   \"steps\": []}\n]\n");
  auto recs = read_all({f});
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].text == "{\"trace_id\": \"a\", \"steps\": []}");
  CHECK(recs[0].origin.line == 2);
  CHECK(recs[0].origin.column == 3);
  CHECK(recs[1].text == "{\"trace_id\": \"b,]\",\n   \"steps\": []}");
  CHECK(recs[1].origin.line == 3);
  CHECK(recs[1].origin.column == 3);
}

TEST_CASE("json: one object, or an array that is itself one trajectory, is one record") {
  TempDir d;
  auto one = read_all({d.write("one.json", "\n{\"steps\": []}\n")});
  REQUIRE(one.size() == 1);
  CHECK(one[0].text == "\n{\"steps\": []}\n");
  CHECK(one[0].origin.line == 1);

  auto msgs = read_all({d.write("msgs.json", "[{\"role\": \"user\", \"content\": \"hi\"}]")});
  REQUIRE(msgs.size() == 1);
  CHECK(msgs[0].text == "[{\"role\": \"user\", \"content\": \"hi\"}]");

  auto names = read_all({d.write("names.json", "[\"a\", \"b\"]")});
  REQUIRE(names.size() == 1);

  auto tools = read_all({d.write("tools.json", "[{\"name\": \"a\", \"kwargs\": {}}]")});
  REQUIRE(tools.size() == 1);

  auto lists = read_all({d.write("lists.json", "[[\"a\"], [\"b\"]]")});
  REQUIRE(lists.size() == 2);  // an array of tool lists is an array of records
  CHECK(lists[1].text == "[\"b\"]");

  auto empty = read_all({d.write("empty_array.json", " [ ] ")});
  CHECK(empty.empty());
}

TEST_CASE("json: a truncated array hands the broken tail to the parser; trailing bytes are an error") {
  TempDir d;
  auto cut = read_all({d.write("cut.json", "[{\"a\": 1}, {\"b\": [2")});
  REQUIRE(cut.size() == 2);
  CHECK(cut[1].text == "{\"b\": [2");
  CHECK(cut[1].origin.column == 12);

  auto trail = read_all({d.write("trail.json", "[{\"a\": 1}]\n x")});
  REQUIRE(trail.size() == 2);
  CHECK(trail[1].container_error == "invalid JSON: unexpected content after the top-level array");
  CHECK(trail[1].origin.line == 2);
  CHECK(trail[1].origin.column == 2);
}

TEST_CASE("directories are read recursively in sorted order, JSON files only") {
  TempDir d;
  d.write("b.jsonl", "{\"n\":2}\n");
  d.write("a/z.json", "{\"n\":1}");
  d.write("c/d/e.ndjson", "{\"n\":3}\n");
  d.write("notes.txt", "not a trace");
  auto recs = read_all({d.path.string()});
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].text == "{\"n\":1}");
  CHECK(recs[1].text == "{\"n\":2}");
  CHECK(recs[2].text == "{\"n\":3}");
  CHECK(recs[2].origin.record == 2);
}

TEST_CASE("container errors become records carrying the message") {
  TempDir d;
  auto recs = read_all({(d.path / "missing.jsonl").string(), "/dev/null", d.write("empty.json", "  \n")});
  REQUIRE(recs.size() == 3);
  CHECK(recs[0].container_error == "cannot open file: No such file or directory");
  CHECK(recs[1].container_error == "not a regular file");
  CHECK(recs[2].container_error == "empty file: no JSON value");
  CHECK(recs[2].origin.record == 2);
}

TEST_CASE("a UTF-8 BOM at the start of a file is skipped") {
  TempDir d;
  auto recs = read_all({d.write("bom.jsonl", "\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n")});
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].text == "{\"a\":1}");
  CHECK(recs[0].origin.column == 4);
  CHECK(recs[1].text == "\xEF\xBB\xBF{\"b\":2}");  // only the file's first bytes are a BOM
}

TEST_CASE("a FIFO or a dangling link inside a directory is a skipped entry carrying its warning") {
  TempDir d;
  d.write("a.jsonl", "{\"n\":1}\n");
  REQUIRE(::mkfifo((d.path / "b.jsonl").c_str(), 0600) == 0);
  fs::create_symlink(d.path / "nowhere.jsonl", d.path / "c.jsonl");
  d.write("d.jsonl", "{\"n\":2}\n");
  auto recs = read_all({d.path.string()});
  REQUIRE(recs.size() == 4);
  CHECK(!recs[0].skipped());
  CHECK(recs[0].text == "{\"n\":1}");
  CHECK(recs[1].skipped());
  CHECK(recs[1].text.empty());
  CHECK(recs[1].container_error.empty());
  CHECK(recs[1].skip_warning == (d.path / "b.jsonl").string() + ":1:1: warning: a FIFO, skipped");
  CHECK(recs[2].skip_warning == (d.path / "c.jsonl").string() + ":1:1: warning: dangling symbolic link, skipped");
  CHECK(!recs[3].skipped());  // the warning does not stick to the records after it
  CHECK(recs[3].text == "{\"n\":2}");
  CHECK(recs[3].origin.record == 1);  // a skipped entry is not a record
}

namespace {
std::string gzip_of(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// (file, line, column, text or error) of every record, for comparing two ways of reading.
std::vector<std::string> located(RecordSource src) {
  std::vector<std::string> out;
  RawRecord r;
  while (src.next(r))
    out.push_back(r.origin.file + ":" + std::to_string(r.origin.line) + ":" + std::to_string(r.origin.column) + " " +
                  (r.skipped() ? r.skip_warning : r.container_error.empty() ? std::string(r.bytes()) : r.container_error));
  return out;
}
}  // namespace

TEST_CASE("input layer: a folder lists every trace file, compressed ones included, sorted") {
  TempDir d;
  d.write("b.jsonl.gz", gzip_of("{\"a\":1}\n"));
  d.write("a.jsonl", "{\"a\":1}\n");
  d.write("sub/c.eval", "not a zip");
  d.write("sub/d.ndjson.zst", "");
  d.write("e.json.gz", gzip_of("[]"));
  d.write("notes.txt", "x");
  std::vector<std::string> names;
  for (const InputEntry& e : list_inputs({d.path.string(), (d.path / "missing.jsonl").string()}))
    names.push_back(fs::path(e.path).filename().string() + (e.kind == InputEntry::Kind::file ? "" : " " + e.message));
  CHECK(names == std::vector<std::string>{"a.jsonl", "b.jsonl.gz", "e.json.gz", "c.eval", "d.ndjson.zst",
                                          "missing.jsonl cannot open file: No such file or directory"});
  CHECK(list_input("-") == std::vector<InputEntry>{{"-", InputEntry::Kind::standard_input, {}}});
}

TEST_CASE("input layer: only plain JSONL is cut; its ranges read every record once, located as a whole read") {
  TempDir d;
  std::string text;
  for (int i = 0; i < 200; ++i) text += (i % 7 == 3 ? "\n" : "") + std::string("{\"i\":") + std::to_string(i) + (i % 5 == 0 ? "}\r\n" : "}\n");
  std::string plain = d.write("plain.jsonl", "\xEF\xBB\xBF" + text + "{\"last\":1}");
  std::string gz = d.write("big.jsonl.gz", gzip_of(text));
  std::string disguised = d.write("disguised.jsonl", gzip_of(text));
  std::string json = d.write("doc.json", "[" + std::string(300, ' ') + "{\"a\":1}]");
  CHECK(file_layout(plain) == FileLayout::lines);
  CHECK(file_layout(gz) == FileLayout::compressed_lines);
  CHECK(file_layout(disguised) == FileLayout::compressed_lines);
  CHECK(file_layout(json) == FileLayout::document);
  CHECK(file_layout((d.path / "x.eval").string()) == FileLayout::archive);
  CHECK(file_layout((d.path / "gone.jsonl").string()) == FileLayout::unreadable);
  CHECK(file_layout(plain, InputFormat::session) == FileLayout::session_log);
  for (const std::string& whole : {gz, disguised, json}) {
    std::vector<InputPiece> pieces = split_entry({whole, InputEntry::Kind::file, {}}, 16);
    REQUIRE(pieces.size() == 1);
    CHECK(!pieces[0].ranged);
  }
  const std::vector<std::string> expected = located(RecordSource({plain}));
  REQUIRE(expected.size() == 201);
  for (std::uint64_t size : {1ull, 2ull, 7ull, 64ull, 1000ull, 1ull << 20}) {
    CAPTURE(size);
    std::vector<InputPiece> pieces = split_entry({plain, InputEntry::Kind::file, {}}, size);
    CHECK(pieces.size() == (size >= fs::file_size(plain) ? 1 : (fs::file_size(plain) + size - 1) / size));
    std::vector<std::int64_t> counts;
    for (const InputPiece& p : pieces) counts.push_back(p.ranged ? count_newlines(plain, p.start, p.end) : 0);
    set_lines_before(pieces, counts);
    std::vector<std::string> got;
    for (const InputPiece& p : pieces)  // each piece read on its own
      for (std::string& r : located(RecordSource(std::vector<InputPiece>{p}, InputFormat::auto_detect))) got.push_back(std::move(r));
    CHECK(got == expected);
  }
  // A file that cannot be opened is reported by the range at its start only.
  std::string gone = (d.path / "gone.jsonl").string();
  std::vector<InputPiece> lost{{{gone, InputEntry::Kind::file, {}}, true, 0, 10, 0}, {{gone, InputEntry::Kind::file, {}}, true, 10, 20, 3}};
  CHECK(located(RecordSource(lost, InputFormat::auto_detect)) ==
        std::vector<std::string>{gone + ":1:1 cannot open file: No such file or directory"});
}

namespace {
// Lines of every size: short ones, lines begun near the end of a read, lines longer than half
// of it and than all of it, blank lines and CRLF.
std::string mixed_lines(int records, std::uint64_t seed) {
  std::string body;
  auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int i = 0; i < records; ++i) {
    std::size_t size = next() % 8 == 0 ? next() % (kRecordReadBuffer * 2) : next() % 5000;
    body += R"({"i":)" + std::to_string(i) + R"(,"s":")" + std::string(size, static_cast<char>('a' + i % 26)) + "\"}";
    body += i % 5 == 0 ? "\r\n" : "\n";
    if (i % 9 == 0) body += "  \n";
  }
  return body;
}
}  // namespace

TEST_CASE("jsonl: records lent with their read block stay whole while held, and the blocks go with them") {
  // Records of every size (lines begun near the end of a read, lines longer than half of it,
  // blank lines, CRLF), plain and gzip: every record is held until the end, as a batch holds
  // its records while the source reads on, and each is what a copying read gives.
  TempDir d;
  const std::string body = mixed_lines(600, 777);
  for (const std::string& f : {d.write("shared.jsonl", body), d.write("shared.jsonl.gz", gzip_of(body))}) {
    CAPTURE(f);
    std::vector<RawRecord> copied = read_all({f});
    REQUIRE(copied.size() == 600);
    auto src = std::make_unique<RecordSource>(std::vector<std::string>{f});
    std::vector<RawRecord> held;
    std::size_t lent = 0;
    for (;;) {
      RawRecord r;
      r.may_share = true;
      if (!src->next(r)) break;
      if (r.borrowed.data()) {
        ++lent;
        REQUIRE(r.block);
        CHECK(r.text.empty());
        CHECK(r.bytes().data() >= r.block.data());
        CHECK(r.bytes().data() + r.bytes().size() + kRecordPadding <= r.block.data() + r.block.size());
      } else {
        CHECK(!r.block);
      }
      held.push_back(std::move(r));
    }
    REQUIRE(held.size() == copied.size());
    for (std::size_t i = 0; i < held.size(); ++i) {
      CAPTURE(i);
      CHECK(held[i].bytes() == copied[i].text);
      CHECK(held[i].origin.line == copied[i].origin.line);
    }
    CHECK(lent > 450);  // all but lines begun with more than half a read left to come
    CHECK(lent < 600);
    // Once the source is gone, each record's block is held by records alone: freed with the
    // last of them.
    src.reset();
    for (const RawRecord& r : held)
      if (r.block) {
        std::size_t holders = 0;
        for (const RawRecord& o : held) holders += o.block == r.block;
        CHECK(r.block.exclusive() == (holders == 1));
      }
  }
}

TEST_CASE("jsonl: a record lent with its block keeps its bytes when the source reads on, borrowed ones do not need to") {
  TempDir d;
  // The second line starts 100 bytes before the end of the first read and ends in the second.
  const std::size_t first = kRecordReadBuffer - 100;
  std::string second = R"({"s":")" + std::string(3000, 'y') + "\"}";
  std::string f = d.write("span.jsonl", "\"" + std::string(first - 3, 'x') + "\"\n" + second + "\n{\"c\":3}\n");
  RecordSource src({f});
  RawRecord a, b, c;
  a.may_share = b.may_share = c.may_share = true;
  REQUIRE(src.next(a));
  REQUIRE(src.next(b));  // moved to the front of a new block: `a` still holds the first
  REQUIRE(a.block);
  REQUIRE(b.block);
  CHECK(!(a.block == b.block));
  CHECK(a.bytes() == "\"" + std::string(first - 3, 'x') + "\"");
  CHECK(b.bytes() == second);
  REQUIRE(src.next(c));
  CHECK(c.block == b.block);
  CHECK(!b.block.exclusive());
  CHECK(c.bytes() == "{\"c\":3}");
  c.block.reset();
  CHECK(!src.next(c));
  CHECK(!c.block);
  CHECK(b.bytes() == second);
}

TEST_CASE("jsonl: a read block no record holds any more is read into again, not allocated anew") {
  TempDir d;
  // Line 2 begins 100 bytes before the end of the first read, line 4 100 bytes before the end
  // of the second: each moves to the front of another block.
  const std::size_t first = kRecordReadBuffer - 100;
  const std::string line1 = "\"" + std::string(first - 3, 'x') + "\"";
  const std::string line2 = "\"" + std::string(2998, 'y') + "\"";
  const std::string line3 = "\"" + std::string(kRecordReadBuffer - 100 - (line2.size() + 1) - 3, 'z') + "\"";
  const std::string line4 = "\"" + std::string(2998, 'w') + "\"";
  std::string f = d.write("reuse.jsonl", line1 + "\n" + line2 + "\n" + line3 + "\n" + line4 + "\n");
  RecordSource src({f});
  RawRecord a, b, c, e;
  a.may_share = b.may_share = c.may_share = e.may_share = true;
  REQUIRE(src.next(a));
  REQUIRE(src.next(b));
  REQUIRE(a.block);
  REQUIRE(b.block);
  REQUIRE(!(a.block == b.block));
  const char* first_block = a.block.data();
  const std::size_t block_size = a.block.size();
  a.block.reset();  // done with: the first block is free for the source again
  // Had the source let go of it, an allocation of its size would likely take its place.
  SharedBlock other = SharedBlock::make(block_size);
  CHECK(other.data() != first_block);
  REQUIRE(src.next(c));
  CHECK(c.block == b.block);
  CHECK(c.bytes() == line3);
  REQUIRE(src.next(e));  // `b` and `c` hold the second block: the fourth line goes to the first
  REQUIRE(e.block);
  CHECK(e.block.data() == first_block);
  CHECK(e.bytes() == line4);
  CHECK(b.bytes() == line2);
  CHECK(c.bytes() == line3);
  CHECK(!src.next(e));
}


TEST_CASE("jsonl: read ahead by other threads, the records are what one thread reading in turn gets") {
  // As the pipeline's workers do: one thread takes records (holding them, as batches do) while
  // others read the blocks to come ahead, all at once.
  TempDir d;
  const std::string body = mixed_lines(700, 4242);
  for (const std::string& f : {d.write("ahead.jsonl", body), d.write("ahead.jsonl.gz", gzip_of(body))}) {
    CAPTURE(f);
    const std::vector<RawRecord> want = read_all({f});
    REQUIRE(want.size() == 700);
    for (int round = 0; round < 3; ++round) {
      RecordSource src({f, f});  // the same file twice: reading ahead starts again on the second
      std::atomic<bool> done{false};
      std::vector<std::thread> ahead;
      for (int t = 0; t < 2; ++t)
        ahead.emplace_back([&] {
          while (!done.load()) src.read_ahead();
        });
      // Records are held a while, as batches hold them, and checked when let go of: their
      // bytes stay whole while the source reads on.
      std::deque<std::pair<std::size_t, RawRecord>> held;
      std::size_t n = 0, wrong = 0;
      auto let_go = [&](std::size_t keep) {
        while (held.size() > keep) {
          const auto& [k, rec] = held.front();
          wrong += rec.bytes() != want[k % want.size()].text || rec.origin.line != want[k % want.size()].origin.line;
          held.pop_front();
        }
      };
      for (;;) {
        RawRecord r;
        r.may_share = true;
        if (!src.next(r)) break;
        held.emplace_back(n++, std::move(r));
        let_go(40 + n % 60);
      }
      let_go(0);
      done = true;
      for (std::thread& t : ahead) t.join();
      CHECK(n == 2 * want.size());
      CHECK(wrong == 0);
    }
    // The same, checking every record: one thread reads ahead before each record is taken.
    RecordSource src({f});
    std::vector<RawRecord> got;
    for (;;) {
      src.read_ahead();
      RawRecord r;
      r.may_share = true;
      if (!src.next(r)) break;
      got.push_back(std::move(r));
    }
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].bytes() == want[i].text);
      CHECK(got[i].origin.line == want[i].origin.line);
      CHECK(got[i].origin.column == want[i].origin.column);
      CHECK(got[i].origin.record == want[i].origin.record);
    }
  }
}

TEST_CASE("jsonl: a file that grows after its end was read ahead is read on from where its lines stopped") {
  TempDir d;
  // Three reads' worth and a bit: the blocks read ahead end short of the bytes appended later.
  std::string first;
  for (int i = 0; first.size() < 3 * kRecordReadBuffer + 5000; ++i)
    first += R"({"i":)" + std::to_string(i) + R"(,"pad":")" + std::string(900, 'p') + "\"}\n";
  std::string more;
  for (int i = 0; i < 400; ++i) more += R"({"more":)" + std::to_string(i) + R"(,"pad":")" + std::string(900, 'q') + "\"}\n";
  const std::string f = d.write("grow.jsonl", first);
  RecordSource src({f});
  RawRecord r;
  r.may_share = true;
  REQUIRE(src.next(r));
  src.read_ahead();  // reads to the end of the file as it is now
  {
    std::ofstream(f, std::ios::binary | std::ios::app) << more;
  }
  std::size_t n = 1;
  std::string last;
  while (src.next(r)) {
    ++n;
    last = std::string(r.bytes());
  }
  const std::string want_all = d.write("want.jsonl", first + more);
  CHECK(n == read_all({want_all}).size());
  CHECK(last == R"({"more":399,"pad":")" + std::string(900, 'q') + "\"}");
}
