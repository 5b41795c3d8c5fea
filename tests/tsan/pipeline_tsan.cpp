// The record pipeline (run/pipeline.hpp) under ThreadSanitizer: its workers read batches in
// turn, process them at uneven speeds, and write them in input order, one worker at a time
// (whichever finished the batch whose turn has come; the output here is slow at times too).
// Built alone with -fsanitize=thread, with the sources of RecordSource (scripts/setup.sh test):
//   clang++ -std=c++20 -fsanitize=thread -O1 -g1 -Iinclude -Isrc tests/tsan/pipeline_tsan.cpp \
//     src/readers/{record_source,input_stream,input_list,record_shape}.cpp …
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include <unistd.h>

#include "run/pipeline.hpp"

using namespace trajcheck;

namespace {
struct SlowSometimes {
  std::uint64_t seen = 0;
  std::mt19937 rng{1};
  void process(const RawRecord& r, std::string& out, std::string& err) {
    ++seen;
    if (rng() % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    out += r.text;
    out += '\n';
    if (r.origin.record % 97 == 0) err += "e" + r.text + "\n";
  }
};
}  // namespace

TEST_CASE("pipeline: every record once, in input order, for any number of workers and records") {
  for (unsigned jobs : {2u, 3u, 8u}) {
    for (std::uint64_t n : {0u, 1u, 255u, 256u, 257u, 5000u, 20000u}) {
      CAPTURE(jobs);
      CAPTURE(n);
      std::uint64_t next = 0;
      RecordInput input = [&](RawRecord& r) {
        if (next == n) return false;
        r.text = std::to_string(next);
        r.origin.record = next++;
        return true;
      };
      std::string out, err, want_out, want_err;
      for (std::uint64_t k = 0; k < n; ++k) {
        want_out += std::to_string(k) + "\n";
        if (k % 97 == 0) want_err += "e" + std::to_string(k) + "\n";
      }
      std::atomic<int> inside{0};
      bool overlapped = false;
      std::mt19937 slow{3};
      RunOutput output = [&](std::string_view o, std::string_view e) {
        if (inside.fetch_add(1) != 0) overlapped = true;
        if (slow() % 20 == 0) std::this_thread::sleep_for(std::chrono::microseconds(slow() % 300));
        out += o;
        err += e;
        inside.fetch_sub(1);
      };
      std::function<SlowSometimes()> make = [] { return SlowSometimes{}; };
      auto workers = process_records<SlowSometimes>(input, jobs, make, output);
      std::uint64_t seen = 0;
      for (const auto& w : workers) seen += w.seen;
      CHECK_FALSE(overlapped);
      CHECK(workers.size() == jobs);
      CHECK(seen == n);
      CHECK(out == want_out);
      CHECK(err == want_err);
    }
  }
}

namespace {
// Reads records out of the bytes lent to it, as the pipeline's workers read records lent from
// RecordSource's read blocks.
struct BlockReader {
  std::uint64_t seen = 0;
  std::mt19937 rng{2};
  void process(const RawRecord& r, std::string& out, std::string&) {
    ++seen;
    if (rng() % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    out += r.bytes();
    out += '\n';
  }
};
}  // namespace

TEST_CASE("pipeline: records lent from shared blocks, a block rewritten only once no record holds it") {
  // As RecordSource lends with RawRecord::may_share: a block takes several records; the next
  // ones go to the same block rewritten when no record holds it any more (exclusive()), else
  // to a new one. ThreadSanitizer checks that each rewrite happens after every read of the
  // records that held the block.
  for (unsigned jobs : {2u, 3u}) {
    CAPTURE(jobs);
    const std::uint64_t n = 30000;
    constexpr std::size_t kBlock = 4096, kRecord = 40;
    SharedBlock block = SharedBlock::make(kBlock + kRecordPadding);
    std::size_t used = kBlock;  // full: the first record takes a block
    std::uint64_t next = 0, reused = 0, fresh = 0;
    RecordInput input = [&](RawRecord& r) {
      if (next == n) return false;
      REQUIRE(r.may_share);
      if (block.exclusive()) {  // held by no record: rewritten from its start
        reused += used > 0;
        used = 0;
      } else if (used + kRecord > kBlock) {
        block = SharedBlock::make(kBlock + kRecordPadding);
        ++fresh;
        used = 0;
      }
      std::string text = std::to_string(next);
      text.resize(kRecord, ' ');
      std::memcpy(block.data() + used, text.data(), kRecord);
      r.borrowed = std::string_view(block.data() + used, kRecord);
      r.block = block;
      r.origin.record = next++;
      used += kRecord;
      return true;
    };
    std::string out, want;
    for (std::uint64_t k = 0; k < n; ++k) {
      std::string text = std::to_string(k);
      text.resize(kRecord, ' ');
      want += text + "\n";
    }
    RunOutput output = [&](std::string_view o, std::string_view) { out += o; };
    std::function<BlockReader()> make = [] { return BlockReader{}; };
    process_records<BlockReader>(input, jobs, make, output);
    CHECK(out == want);
    CHECK(reused > 0);
    CHECK(fresh > 0);
  }
}

namespace {
// Copies each record's bytes out, as the workers parse records lent from the read blocks.
struct Echo {
  void process(const RawRecord& r, std::string& out, std::string&) {
    out += r.bytes();
    out += '\n';
  }
};
}  // namespace

TEST_CASE("pipeline: a file's blocks read ahead by the workers while one at a time takes records") {
  // RecordSource::read_ahead, called by each worker outside the input lock, reads blocks with
  // pread into blocks that next() (under the lock) then takes: ThreadSanitizer checks that
  // each block is read before its bytes are split into records, and rewritten only once no
  // record holds it.
  char path[] = "/tmp/trajcheck_tsan_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::string want;
  std::mt19937 rng{7};
  for (int i = 0; i < 4000; ++i) {
    const std::size_t size = rng() % 16 == 0 ? rng() % (kRecordReadBuffer / 2 + 5000) : rng() % 3000;
    want += "{\"i\":" + std::to_string(i) + ",\"s\":\"" + std::string(size, static_cast<char>('a' + i % 26)) + "\"}\n";
  }
  REQUIRE(::write(fd, want.data(), want.size()) == static_cast<ssize_t>(want.size()));
  ::close(fd);
  for (unsigned jobs : {2u, 3u}) {
    CAPTURE(jobs);
    RecordSource source({path});
    std::string out;
    RunOutput output = [&](std::string_view o, std::string_view) { out += o; };
    std::function<Echo()> make = [] { return Echo{}; };
    process_records<Echo>(RecordInput(source), jobs, make, output);
    CHECK(out == want);
  }
  ::unlink(path);
}
