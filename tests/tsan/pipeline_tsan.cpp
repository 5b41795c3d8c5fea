// The record pipeline (run/pipeline.hpp) under ThreadSanitizer: its workers read batches in
// turn, process them at uneven speeds, and the calling thread writes them in input order.
// Header-only, so it is built alone with -fsanitize=thread (scripts/setup.sh test):
//   clang++ -std=c++20 -fsanitize=thread -O1 -g1 -Iinclude -Isrc tests/tsan/pipeline_tsan.cpp
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

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
      RunOutput output = [&](std::string_view o, std::string_view e) {
        out += o;
        err += e;
      };
      std::function<SlowSometimes()> make = [] { return SlowSometimes{}; };
      auto workers = process_records<SlowSometimes>(input, jobs, make, output);
      std::uint64_t seen = 0;
      for (const auto& w : workers) seen += w.seen;
      CHECK(workers.size() == jobs);
      CHECK(seen == n);
      CHECK(out == want_out);
      CHECK(err == want_err);
    }
  }
}
