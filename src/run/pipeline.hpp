// Parallel, order-preserving processing of input records with bounded memory.
//
//   struct Worker {                                   // one per thread, reused per record
//     void process(const trajcheck::RawRecord& rec, std::string& out, std::string& err);
//   };                                                // (or RawRecord&: a worker may free
//                                                     // rec.text, which is refilled after)
//   std::vector<Worker> done = trajcheck::process_records<Worker>(
//       source, jobs, [&] { return Worker{…}; }, stdout, stderr);
//   // merge each worker's own counters from `done`
//
// `jobs` workers (the calling thread and jobs - 1 others) each read a batch of records (one
// worker at a time) and process it; each batch's `out` and `err` text is written in input
// order, by one worker at a time. At most a fixed
// number of batches are in flight, so memory stays flat whatever the input size. With
// jobs <= 1 everything runs on the calling thread.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdio>
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

// Records per batch and batch byte budget: small enough to keep latency and memory low (and
// the read blocks the batches in flight hold few enough to stay in the caches), large enough
// to amortize locking (256 KiB batches took longer than 512 KiB ones with -j 2).
constexpr std::size_t kBatchRecords = 256;
constexpr std::size_t kBatchBytes = 1 << 19;
// Buffer capacity a batch may keep beyond what its records need (see bound_kept_memory).
constexpr std::size_t kBatchSpareBytes = 2 << 20;

namespace detail {
// Each record slot keeps the capacity of the largest record it ever held; left alone, the
// memory kept by the batches would creep up with the length of the input (the largest of
// more and more records). Past kBatchSpareBytes of spare capacity, the slots with the most
// spare are trimmed to what they hold until half of it is left, so memory depends on the
// records in flight, not on the input's history. (Trimming every slot each time the bound was
// passed made records of very different sizes outgrow their slots again within a few
// batches: three quarters of check -j 1's page faults on the bench data.)
inline void bound_kept_memory(Batch& b) {
  auto spare_of = [&](std::size_t i) {
    const std::string& text = b.records[i].text;
    if (i >= b.used) return text.capacity();  // holds nothing live
    // A live record's slot may be up to twice its size (a long line's buffer after its last
    // doubling): pages past what was written were never touched, and trimming such a slot
    // would copy the record while it is held (a 28 MB record: 56 MB at once).
    const std::size_t need = text.size() + kRecordPadding;
    return text.capacity() - std::min(text.capacity(), 2 * need);
  };
  std::size_t spare = 0;
  for (std::size_t i = 0; i < b.records.size(); ++i) spare += spare_of(i);
  if (spare > kBatchSpareBytes) {
    // Down to half the bound, largest spare first, so that trimming (a copy of the record)
    // is rare and touches few slots: slots outgrown again soon are the costly part.
    std::vector<std::pair<std::size_t, std::size_t>> order;  // (spare, slot)
    order.reserve(b.records.size());
    for (std::size_t i = 0; i < b.records.size(); ++i)
      if (std::size_t sp = spare_of(i)) order.emplace_back(sp, i);
    std::sort(order.begin(), order.end(), std::greater<>());
    for (const auto& [sp, i] : order) {
      if (spare <= kBatchSpareBytes / 2) break;
      std::string& text = b.records[i].text;
      if (i >= b.used) {
        std::string().swap(text);
      } else {
        std::string tight;
        tight.reserve(text.size() + kRecordPadding);
        tight.append(text);
        text.swap(tight);
      }
      spare -= sp;
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
  // Records lent from the source's read blocks hold them (RawRecord::may_share) until their
  // batch is processed; a block counts in full towards the batch's bytes once, for the first
  // record that holds it, so the blocks held by the batches in flight stay within their budget
  // whatever lies between the records (blank lines, records copied out).
  auto fill = [&](Batch& b) {
    b.used = 0;
    std::size_t bytes = 0;
    const char* last_block = nullptr;
    while (b.used < kBatchRecords && bytes < kBatchBytes) {
      if (b.used == b.records.size()) b.records.emplace_back().may_share = true;
      RawRecord& rec = b.records[b.used];
      if (!input(rec)) break;
      if (!rec.block) {
        bytes += rec.bytes().size();
      } else if (rec.block.data() != last_block) {
        last_block = rec.block.data();
        bytes += rec.block.size();
      }
      ++b.used;
    }
    detail::bound_kept_memory(b);
    return b.used > 0;
  };
  // Lets go of the read blocks a processed batch's records hold (the last holder frees one).
  auto release_blocks = [](Batch& b) {
    for (std::size_t r = 0; r < b.used; ++r) {
      RawRecord& rec = b.records[r];
      if (rec.block) {
        rec.block.reset();
        rec.borrowed = {};
      }
    }
  };
  std::vector<Worker> workers;
  // One thread: each record is processed right after it is read, while its bytes are still
  // in the cache, and may borrow the source's read buffer (RawRecord::may_borrow); the text
  // of a batch's worth of records is handed to `output` at once.
  auto run_serial = [&](Worker& w) {
    Batch b;
    b.records.resize(1);
    b.used = 1;
    RawRecord& rec = b.records[0];
    rec.may_borrow = true;
    for (;;) {
      b.out.clear();
      b.err.clear();
      std::size_t records = 0, bytes = 0;
      bool more = true;
      while (records < kBatchRecords && bytes < kBatchBytes) {
        if (!(more = input(rec))) break;
        bytes += rec.bytes().size();
        ++records;
        w.process(rec, b.out, b.err);
      }
      if (records) output(b.out, b.err);
      // The record is processed: its slot holds nothing live, so trimming frees it rather
      // than copying it.
      b.used = 0;
      detail::bound_kept_memory(b);
      b.used = 1;
      if (!more) break;
    }
  };
  if (jobs <= 1) {
    workers.push_back(make_worker());
    run_serial(workers[0]);
    return workers;
  }

  for (unsigned i = 0; i < jobs; ++i) workers.push_back(make_worker());
  // Each worker takes its own batch of records (one at a time, under `input_mu`), reads the
  // bytes of the batches to come ahead (RecordInput::read_ahead, outside the lock) and then
  // processes its batch. A record is lent from the read block it lies in, not copied into its
  // batch slot: the part under the lock is the search for line ends (and reading, for input
  // that is not read ahead). The calling thread is worker 0. A processed
  // batch is written by the worker that finished it when its turn has come, together with
  // the batches after it that are already done; otherwise it waits in `done` for the worker
  // writing to reach it. So no thread exists only to write and none is woken per batch to
  // write it (check -j 2 of 300 MB of bench data: 190 context switches, against 750 with a
  // writing thread).
  std::mutex input_mu;                  // held while a batch is filled: input() is not reentrant
  std::uint64_t next_seq = 0;           // under input_mu
  bool input_done = false;              // under input_mu
  std::mutex mu;                        // the rest
  std::condition_variable batch_freed;
  std::map<std::uint64_t, Batch*> done; // processed, waiting for their turn to be written
  std::uint64_t next_write = 0;         // the sequence number of the batch to write next
  std::vector<Batch*> free_batches;
  std::vector<std::unique_ptr<Batch>> owned;
  const std::size_t max_batches = 2 * jobs + 2;

  auto take_free = [&]() -> Batch* {  // a batch to fill; waits while max_batches are in flight
    std::unique_lock<std::mutex> lk(mu);
    if (free_batches.empty() && owned.size() < max_batches) {
      owned.push_back(std::make_unique<Batch>());
      return owned.back().get();
    }
    batch_freed.wait(lk, [&] { return !free_batches.empty(); });
    Batch* b = free_batches.back();
    free_batches.pop_back();
    return b;
  };
  // Files `b` as done and writes every batch whose turn has come. The batch being written is
  // out of `done` and `next_write` moves past it only once it is written, so no other worker
  // finds a batch to write meanwhile: the one writing comes to `b` in turn.
  auto hand_over = [&](Batch* b) {
    std::unique_lock<std::mutex> lk(mu);
    done.emplace(b->seq, b);
    std::size_t freed = 0;
    for (auto it = done.find(next_write); it != done.end(); it = done.find(next_write)) {
      Batch* w = it->second;
      done.erase(it);
      lk.unlock();
      output(w->out, w->err);
      lk.lock();
      free_batches.push_back(w);
      ++next_write;
      ++freed;
    }
    lk.unlock();
    if (freed > 1) batch_freed.notify_all();
    else if (freed == 1) batch_freed.notify_one();
  };
  auto work = [&](unsigned i) {
    for (;;) {
      Batch* b = take_free();
      bool filled;
      {
        std::lock_guard<std::mutex> lk(input_mu);
        filled = !input_done && fill(*b);
        if (filled) b->seq = next_seq++;
        else input_done = true;
      }
      // The bytes of the batches to come are read now, by this worker and outside input_mu,
      // while the other takes its records: the system's copies are not made in turn.
      if (filled && input.read_ahead) input.read_ahead();
      if (!filled) {
        {
          std::lock_guard<std::mutex> lk(mu);
          free_batches.push_back(b);
        }
        batch_freed.notify_one();  // a worker waiting for a batch may now find the input ended
        return;
      }
      b->out.clear();
      b->err.clear();
      for (std::size_t r = 0; r < b->used; ++r) workers[i].process(b->records[r], b->out, b->err);
      release_blocks(*b);
      hand_over(b);
    }
  };
  // The system may refuse threads (limits on processes or address space): go on with those
  // that started, or on this thread alone, rather than abort.
  std::vector<std::thread> threads;
  try {
    for (unsigned i = 1; i < jobs; ++i) threads.emplace_back(work, i);
  } catch (const std::system_error&) {
  }
  if (threads.empty()) {
    run_serial(workers[0]);
    return workers;
  }
  work(0);
  // Every batch a worker filled was handed over before it returned, and written by then or
  // by the worker writing before it returned: once all have returned, all is written.
  for (auto& t : threads) t.join();
  return workers;
}

// The records of `source`, each batch's `err` written to `err` and `out` to `out`.
template <class Worker>
std::vector<Worker> process_records(RecordSource& source, unsigned jobs,
                                    const std::function<Worker()>& make_worker, std::FILE* out,
                                    std::FILE* err) {
  return process_records<Worker>(RecordInput(source), jobs, make_worker,
                                 write_to(out, err));
}

}  // namespace trajcheck
