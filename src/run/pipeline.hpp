// Parallel, order-preserving processing of input records with bounded memory.
//
//   struct Worker {                                   // one per thread, reused per record
//     void process(const trajcheck::RawRecord& rec, std::string& out, std::string& err);
//   };
//   std::vector<Worker> done = trajcheck::process_records<Worker>(
//       source, jobs, [&] { return Worker{…}; }, stdout, stderr);
//   // merge each worker's own counters from `done`
//
// The calling thread reads records in batches; `jobs` workers process batches; each
// batch's `out` and `err` text is written in input order. At most a fixed number of
// batches are in flight, so memory stays flat whatever the input size. With jobs <= 1
// everything runs on the calling thread.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "trajcheck/reader.hpp"
#include "trajcheck/run.hpp"

namespace trajcheck {

namespace detail {
struct Batch {
  std::uint64_t seq = 0;
  std::vector<RawRecord> records;
  std::size_t used = 0;  // records[0, used) are live; the rest keep capacity
  std::string out, err;
};
void write_all(std::FILE* f, const std::string& s);
}  // namespace detail

// Records per batch and batch byte budget: small enough to keep latency and memory low,
// large enough to amortize locking.
constexpr std::size_t kBatchRecords = 256;
constexpr std::size_t kBatchBytes = 1 << 20;
// Buffer capacity a batch may keep beyond what its records need (see bound_kept_memory).
constexpr std::size_t kBatchSpareBytes = 2 << 20;

namespace detail {
// Each record slot keeps the capacity of the largest record it ever held; left alone, the
// memory kept by the batches would creep up with the length of the input (the largest of
// more and more records). Past kBatchSpareBytes of spare capacity, slots are trimmed to
// what they hold, so memory depends on the records in flight, not on the input's history.
inline void bound_kept_memory(Batch& b) {
  std::size_t spare = 0;
  for (const RawRecord& r : b.records) spare += r.text.capacity() - std::min(r.text.capacity(), r.text.size() + kRecordPadding);
  if (spare <= kBatchSpareBytes) return;
  for (std::size_t i = 0; i < b.records.size(); ++i) {
    std::string& text = b.records[i].text;
    if (i >= b.used) {
      std::string().swap(text);
    } else if (text.capacity() > text.size() + kRecordPadding) {
      std::string tight;
      tight.reserve(text.size() + kRecordPadding);
      tight.append(text);
      text.swap(tight);
    }
  }
  if (b.out.capacity() > kBatchSpareBytes) std::string().swap(b.out);
  if (b.err.capacity() > kBatchSpareBytes) std::string().swap(b.err);
}
}  // namespace detail

// Records from `input`; each batch's text handed to `output` (err, then out) in input order.
template <class Worker>
std::vector<Worker> process_records(const RecordInput& input, unsigned jobs,
                                    const std::function<Worker()>& make_worker, const RunOutput& output) {
  using detail::Batch;
  auto fill = [&](Batch& b) {
    b.used = 0;
    std::size_t bytes = 0;
    while (b.used < kBatchRecords && bytes < kBatchBytes) {
      if (b.used == b.records.size()) b.records.emplace_back();
      if (!input(b.records[b.used])) break;
      bytes += b.records[b.used].text.size();
      ++b.used;
    }
    detail::bound_kept_memory(b);
    return b.used > 0;
  };
  std::vector<Worker> workers;
  auto run_serial = [&](Worker& w) {
    Batch b;
    while (fill(b)) {
      b.out.clear();
      b.err.clear();
      for (std::size_t i = 0; i < b.used; ++i) w.process(b.records[i], b.out, b.err);
      output(b.out, b.err);
    }
  };
  if (jobs <= 1) {
    workers.push_back(make_worker());
    run_serial(workers[0]);
    return workers;
  }

  for (unsigned i = 0; i < jobs; ++i) workers.push_back(make_worker());
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Batch*> todo;              // filled, waiting for a worker
  std::map<std::uint64_t, Batch*> done; // processed, waiting for their turn to be written
  std::vector<Batch*> free_batches;
  std::vector<std::unique_ptr<Batch>> owned;
  const std::size_t max_batches = 2 * jobs + 2;
  bool closed = false;

  std::vector<std::thread> threads;
  auto work = [&](unsigned i) {
    for (;;) {
      Batch* b;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return closed || !todo.empty(); });
        if (todo.empty()) return;
        b = todo.front();
        todo.pop_front();
      }
      b->out.clear();
      b->err.clear();
      for (std::size_t r = 0; r < b->used; ++r) workers[i].process(b->records[r], b->out, b->err);
      {
        std::lock_guard<std::mutex> lk(mu);
        done.emplace(b->seq, b);
      }
      cv.notify_all();
    }
  };
  // The system may refuse threads (limits on processes or address space): go on with those
  // that started, or on this thread alone, rather than abort.
  try {
    for (unsigned i = 0; i < jobs; ++i) threads.emplace_back(work, i);
  } catch (const std::system_error&) {
  }
  if (threads.empty()) {
    run_serial(workers[0]);
    return workers;
  }

  std::uint64_t next_seq = 0, next_write = 0;
  auto write_ready = [&](std::unique_lock<std::mutex>& lk) {
    // Writes every batch whose turn it is; called with the lock held.
    for (auto it = done.find(next_write); it != done.end(); it = done.find(next_write)) {
      Batch* b = it->second;
      done.erase(it);
      lk.unlock();
      output(b->out, b->err);
      lk.lock();
      free_batches.push_back(b);
      ++next_write;
    }
  };
  for (;;) {
    Batch* b;
    {
      std::unique_lock<std::mutex> lk(mu);
      write_ready(lk);
      if (free_batches.empty() && owned.size() < max_batches) {
        owned.push_back(std::make_unique<Batch>());
        free_batches.push_back(owned.back().get());
      }
      cv.wait(lk, [&] {
        write_ready(lk);
        return !free_batches.empty();
      });
      b = free_batches.back();
      free_batches.pop_back();
    }
    if (!fill(*b)) {
      std::lock_guard<std::mutex> lk(mu);
      free_batches.push_back(b);
      break;
    }
    b->seq = next_seq++;
    {
      std::lock_guard<std::mutex> lk(mu);
      todo.push_back(b);
    }
    cv.notify_all();
  }
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] {
      write_ready(lk);
      return next_write == next_seq;
    });
    closed = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  return workers;
}

// The records of `source`, each batch's `err` written to `err` and `out` to `out`.
template <class Worker>
std::vector<Worker> process_records(RecordSource& source, unsigned jobs,
                                    const std::function<Worker()>& make_worker, std::FILE* out,
                                    std::FILE* err) {
  return process_records<Worker>([&](RawRecord& r) { return source.next(r); }, jobs, make_worker,
                                 write_to(out, err));
}

}  // namespace trajcheck
