// util/pipeline.hpp: every record processed once, outputs concatenated in input order with
// several workers, and per-worker state returned for merging.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "run/pipeline.hpp"

using namespace trajcheck;
namespace fs = std::filesystem;

namespace {
struct EchoWorker {
  std::uint64_t seen = 0, lent = 0;
  void process(const RawRecord& rec, std::string& out, std::string& err) {
    ++seen;
    lent += rec.borrowed.data() != nullptr;
    // Uneven work so that batches finish out of order.
    if (rec.origin.record % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    out += rec.bytes();
    out.push_back('\n');
    if (rec.origin.record % 100 == 0) err += "e" + std::to_string(rec.origin.record) + "\n";
  }
};

std::string slurp(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

struct Run {
  std::string out, err;
  std::uint64_t seen = 0, lent = 0;
  std::size_t workers = 0;
};

Run run(const std::string& path, unsigned jobs) {
  RecordSource src({path});
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  std::function<EchoWorker()> make = [] { return EchoWorker{}; };
  auto workers = process_records<EchoWorker>(src, jobs, make, out, err);
  Run r;
  for (auto& w : workers) {
    r.seen += w.seen;
    r.lent += w.lent;
  }
  r.workers = workers.size();
  std::fflush(out);
  std::fflush(err);
  r.out = slurp(out);
  r.err = slurp(err);
  std::fclose(out);
  std::fclose(err);
  return r;
}
}  // namespace

TEST_CASE("pipeline: -j 4 keeps input order and processes every record") {
  fs::path p = fs::temp_directory_path() / ("trajcheck_pipeline_" + std::to_string(::getpid()) + ".jsonl");
  std::string expected, expected_err;
  {
    std::ofstream f(p);
    for (int i = 0; i < 5000; ++i) {
      std::string line = "{\"i\":" + std::to_string(i) + "}";
      f << line << "\n";
      expected += line + "\n";
      if (i % 100 == 0) expected_err += "e" + std::to_string(i) + "\n";
    }
  }
  Run serial = run(p.string(), 1);
  CHECK(serial.workers == 1);
  CHECK(serial.seen == 5000);
  // One thread processes each record before reading the next: it borrows the read buffer.
  CHECK(serial.lent == 5000);
  CHECK(serial.out == expected);
  CHECK(serial.err == expected_err);

  Run parallel = run(p.string(), 4);
  CHECK(parallel.workers == 4);
  CHECK(parallel.seen == 5000);
  // Batches outlive the next read: each record is lent with a handle on its read block.
  CHECK(parallel.lent == 5000);
  CHECK(parallel.out == expected);
  CHECK(parallel.err == expected_err);
  fs::remove(p);
}

TEST_CASE("pipeline: records of every size lent from shared read blocks come out as one thread reads them") {
  // Lines begun near the end of a read (moved to a new block while the batches in flight hold
  // the old one), lines longer than half a read (copied), blank lines and CRLF.
  fs::path p = fs::temp_directory_path() / ("trajcheck_pipeline_sizes_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream f(p, std::ios::binary);
    std::uint64_t seed = 99;
    auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    for (int i = 0; i < 3000; ++i) {
      std::size_t size = next() % 16 == 0 ? next() % (kRecordReadBuffer * 2) : next() % 12000;
      f << R"({"i":)" << i << R"(,"s":")" << std::string(size, static_cast<char>('a' + i % 26)) << "\"}"
        << (i % 5 == 0 ? "\r\n" : "\n");
      if (i % 11 == 0) f << " \n";
    }
  }
  Run serial = run(p.string(), 1);
  CHECK(serial.seen == 3000);
  for (unsigned jobs : {2u, 3u}) {
    CAPTURE(jobs);
    Run parallel = run(p.string(), jobs);
    CHECK(parallel.seen == 3000);
    CHECK(parallel.lent > 2700);
    CHECK(parallel.out == serial.out);
    CHECK(parallel.err == serial.err);
  }
  fs::remove(p);
}

TEST_CASE("pipeline: no input, no output") {
  fs::path p = fs::temp_directory_path() / ("trajcheck_pipeline_empty_" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream(p).close();
  Run r = run(p.string(), 4);
  CHECK(r.seen == 0);
  CHECK(r.out.empty());
  fs::remove(p);
}

TEST_CASE("pipeline: a batch's kept buffers depend on the records it holds, not on its history") {
  trajcheck::detail::Batch b;
  b.records.resize(256);
  // History: every slot once held a 60 KB record (15 MB of capacity kept).
  for (auto& r : b.records) r.text.assign(60'000, 'x');
  // Now the batch holds 100 small records.
  for (auto& r : b.records) r.text.assign(1'000, 'y');
  b.used = 100;
  trajcheck::detail::bound_kept_memory(b);
  std::size_t kept = 0;
  for (const auto& r : b.records) kept += r.text.capacity();
  CHECK(kept <= 100 * (1'000 + trajcheck::kRecordPadding) + trajcheck::kBatchSpareBytes);
  for (std::size_t i = 0; i < b.used; ++i) {
    CHECK(b.records[i].text == std::string(1'000, 'y'));  // contents survive the trim
    CHECK(b.records[i].text.capacity() >= 1'000 + trajcheck::kRecordPadding);  // still parsed in place
  }
  // Under the bound nothing is touched (no reallocation in the steady state).
  const char* before = b.records[0].text.data();
  trajcheck::detail::bound_kept_memory(b);
  CHECK(b.records[0].text.data() == before);
}

TEST_CASE("pipeline: trimming a batch's buffers reallocates the slots with the most spare, not all") {
  trajcheck::detail::Batch b;
  b.records.resize(100);
  for (auto& r : b.records) {  // each a little spare, 100 KB in all: not worth a copy
    r.text.reserve(2'000);
    r.text.assign(1'000, 'y');
  }
  // Three slots once held 1 MB records: 3 MB of spare, over the bound.
  for (int i : {10, 50, 90}) {
    b.records[i].text.reserve(1'000'000);
    b.records[i].text.assign(1'000, 'y');
  }
  b.used = 100;
  std::vector<const char*> before;
  for (const auto& r : b.records) before.push_back(r.text.data());
  trajcheck::detail::bound_kept_memory(b);
  std::size_t spare = 0, moved = 0;
  for (std::size_t i = 0; i < b.records.size(); ++i) {
    const std::string& t = b.records[i].text;
    CHECK(t == std::string(1'000, 'y'));
    // Spare as the bound counts it: beyond twice what a live record needs.
    spare += t.capacity() - std::min(t.capacity(), 2 * (t.size() + trajcheck::kRecordPadding));
    moved += t.data() != before[i];
  }
  CHECK(spare <= trajcheck::kBatchSpareBytes / 2);  // down to half the bound: trimming stays rare
  CHECK(moved >= 2);
  CHECK(moved <= 3);  // only the oversized slots were copied
}

TEST_CASE("pipeline: a live record in a slot up to twice its size is not copied to trim it") {
  trajcheck::detail::Batch b;
  b.records.resize(1);
  b.records[0].text.reserve(8'000'000);  // a long line's buffer after its last doubling
  b.records[0].text.assign(5'000'000, 'z');
  b.used = 1;
  const char* before = b.records[0].text.data();
  trajcheck::detail::bound_kept_memory(b);
  CHECK(b.records[0].text.data() == before);
  b.used = 0;  // processed: the slot holds nothing live and is freed, not copied
  trajcheck::detail::bound_kept_memory(b);
  CHECK(b.records[0].text.capacity() < 1'000);
}
