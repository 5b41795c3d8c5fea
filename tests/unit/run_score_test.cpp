// The score runner through the public headers alone: `trajcheck score`'s golden outputs
// rebuilt from include/trajcheck/*, whole, in pieces whose summaries travel as JSON, and one
// record at a time.
#include <doctest/doctest.h>

#include "run_test_util.hpp"

#include <unistd.h>

#include <cstdio>
#include <cmath>
#include <string>
#include <vector>

#include "trajcheck/score_run.hpp"

using namespace trajcheck;
using run_test::slurp;

namespace {

std::string read_back(std::FILE* f) {
  std::string s;
  std::fflush(f);
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

struct InData : run_test::InDir {
  InData() : InDir(TRAJCHECK_TEST_DIR "/data/score") {}
};

// What the golden runner records: stdout, "--- stderr", stderr, "--- exit N". With `split`,
// the records before it and from it on are scored by two runners and their summaries merged.
std::string score(const std::string& file, ScoreRunOptions o, std::size_t split = 0) {
  std::string body, err;
  RunOutput output = [&](std::string_view out, std::string_view e) {
    body.append(out);
    err.append(e);
  };
  ScoreSummary total;
  for (int part = 0; part < (split ? 2 : 1); ++part) {
    ScoreRunner runner(o);
    REQUIRE(runner.option_error().empty());
    RecordSource source({file});
    std::size_t index = 0;
    const std::size_t first = part == 0 ? 0 : split, last = part == 0 && split ? split : SIZE_MAX;
    ScoreSummary s = runner.run(
        [&](RawRecord& r) {
          while (index < first && source.next(r)) ++index;
          if (index >= last || !source.next(r)) return false;
          ++index;
          return true;
        },
        output);
    ScoreSummary back;
    std::string error;
    REQUIRE(ScoreSummary::from_json(s.to_json(), &back, &error));
    CHECK(back.to_json() == s.to_json());
    total.merge(back);
  }
  std::FILE* b = std::tmpfile();
  std::FILE* out = std::tmpfile();
  REQUIRE(b);
  REQUIRE(out);
  std::fwrite(body.data(), 1, body.size(), b);
  finish_score(o.format, total, o.format == ScoreFormat::json ? b : nullptr, out);
  std::string text = (o.format == ScoreFormat::json ? std::string() : body) + read_back(out);
  std::fclose(b);
  std::fclose(out);
  return text + "--- stderr\n" + err + "--- exit " + std::to_string(exit_status(total)) + "\n";
}

const std::string kGolden = TRAJCHECK_TEST_DIR "/golden/score/";

}  // namespace

TEST_CASE("the public score runner prints what trajcheck score prints") {
  InData in;
  ScoreRunOptions jsonl;
  jsonl.format = ScoreFormat::jsonl;
  ScoreRunOptions text;
  text.jobs = 1;
  ScoreRunOptions json;
  json.format = ScoreFormat::json;
  json.scoring.tool_args = ArgumentMode::superset;
  for (std::size_t split : {0, 1, 3}) {
    CAPTURE(split);
    for (unsigned jobs : {1u, 3u}) {
      jsonl.jobs = jobs;
      CHECK(score("records.jsonl", jsonl, split) == slurp(kGolden + "records.jsonl.expected"));
      CHECK(score("bad.jsonl", jsonl, split) == slurp(kGolden + "bad.jsonl.expected"));
    }
    CHECK(score("records.jsonl", text, split) == slurp(kGolden + "records.text.expected"));
    CHECK(score("agentevals.jsonl", json, split) == slurp(kGolden + "agentevals.json.expected"));
  }
}

TEST_CASE("one score record, read alone, gives its jsonl line") {
  ScoreRunOptions o;
  o.format = ScoreFormat::jsonl;
  ScoreRecordReader reader(o);
  REQUIRE(reader.option_error().empty());
  RawRecord rec;
  rec.origin = RecordOrigin{"mem.jsonl", 4, 1, 3};
  rec.text = R"({"id":7,"actual":[{"tool":"a"},{"tool":"b"}],"expected":["a","c"]})";
  std::string out, err;
  ScoreSummary s;
  reader.read(rec, out, err, s);
  CHECK(err.empty());
  CHECK(out.rfind("{\"id\":7,\"selection\":0.3333333333333333,", 0) == 0);  // the value, in full
  CHECK(out.find("\"missing\":[\"c\"],\"extra\":[\"b\"]") != std::string::npos);
  CHECK(s.records == 1);
  CHECK(s.scored == 1);
  rec.text = "{\"actual\":[]}";
  out.clear();
  reader.read(rec, out, err, s);
  CHECK(out == "{\"record\":\"mem.jsonl:4\",\"error\":\"record has no \\\"expected\\\" (or \\\"reference_outputs\\\")\"}\n");
  CHECK(err == "mem.jsonl:4:1: error: record has no \"expected\" (or \"reference_outputs\")\n");
  CHECK(s.rejected == 1);
  CHECK(exit_status(s) == 2);
}

TEST_CASE("a score record naming a side twice is rejected, not read as one of the two") {
  {  // (the direct path declines such records: the general one reports them)
    ScoreRunOptions o;
    o.format = ScoreFormat::jsonl;
    ScoreRecordReader reader(o);
    REQUIRE(reader.option_error().empty());
    RawRecord rec;
    rec.origin = RecordOrigin{"mem.jsonl", 1, 1, 0};
    std::string out, err;
    ScoreSummary s;
    rec.text = R"({"actual":["a"],"actual":["b"],"expected":["b"]})";
    reader.read(rec, out, err, s);
    CHECK(err == "mem.jsonl:1:17: error: duplicate key \"actual\": a JSON object may name each member once (which of "
                 "the two counts is not defined)\n");
    err.clear();
    rec.text = R"({"expected":["b"],"actual":["b"],"reference_outputs":["a"]})";
    reader.read(rec, out, err, s);
    CHECK(err == "mem.jsonl:1:34: error: the expected side is given twice (\"expected\" and \"reference_outputs\")\n");
    err.clear();
    // inside a side: the trace reader's rule (a message naming "role" twice)
    rec.text = R"({"actual":[{"role":"assistant","role":"user","content":"x"}],"expected":[]})";
    reader.read(rec, out, err, s);
    CHECK(err.find("duplicate key \"role\"") != std::string::npos);
    CHECK(s.rejected == 3);
    CHECK(s.scored == 0);
  }
}

TEST_CASE("score summaries refuse JSON that is not theirs") {
  ScoreSummary s;
  std::string error;
  CHECK_FALSE(ScoreSummary::from_json("{}", &s, &error));
  CHECK_FALSE(error.empty());
  ScoreSummary t;
  t.scored = 3;
  t.selection.add(0.1);
  t.selection.add(2.0 / 3.0);  // not exactly representable in few digits
  t.missed["x"] = 2;
  REQUIRE(ScoreSummary::from_json(t.to_json(), &s, &error));
  CHECK(s.selection == t.selection);
  CHECK(s.selection.value() == t.selection.value());
  CHECK(s.missed["x"] == 2);
  // A sum written as a plain number (not exact) or out of range is refused.
  CHECK_FALSE(ScoreSummary::from_json(
      R"({"records":1,"rejected":0,"warnings":0,"scored":1,"selection":0.5,"ordering":"0","overall":"0",)"
      R"("arguments":"0","ordering_n":0,"arguments_n":0,"strict":0,"unordered":0,"subset":0,"superset":0,)"
      R"("duplicates":0,"buckets":[0,0,0,0,0,0],"missed":{},"extra":{},"below":[]})",
      &s, &error));
  ScoreSum big;
  CHECK_FALSE(ScoreSum::from_string("999999999999999999999999999999999999999999", &big));
  CHECK_FALSE(ScoreSum::from_string("12a", &big));
  CHECK(ScoreSum::from_string("340282366920938463463374607431768211455", &big));  // 2^128 - 1
  CHECK_FALSE(ScoreSum::from_string("340282366920938463463374607431768211456", &big));
}

// Means must not depend on how a run was split (threads, Dask tasks): plain double addition
// does, in its last digits. Every split and order of the same values gives the same bits.
TEST_CASE("score sums are exact: any order and any split give the same mean") {
  std::vector<double> v;
  std::uint64_t x = 99;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(double(x >> 11) / double(1ull << 53) / double(1 + (x >> 60)));
  }
  ScoreSum forward, backward, split[7];
  double naive_forward = 0, naive_backward = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    forward.add(v[i]);
    backward.add(v[v.size() - 1 - i]);
    split[i % 7].add(v[i]);
    naive_forward += v[i];
    naive_backward += v[v.size() - 1 - i];
  }
  ScoreSum merged;
  for (int k = 6; k >= 0; --k) merged.merge(split[k]);
  CHECK(forward == backward);
  CHECK(forward == merged);
  CHECK(forward.mean(v.size()) == merged.mean(v.size()));
  CHECK(forward.to_string() == merged.to_string());
  // The reason for all this: naive sums of these values differ by order.
  CHECK(naive_forward != naive_backward);
  CHECK(std::abs(forward.value() - naive_forward) < 1e-9);
  ScoreSum ones;
  for (int i = 0; i < 3; ++i) ones.add(1.0);
  CHECK(ones.value() == 3.0);
  CHECK(ones.mean(3) == 1.0);
  CHECK(ScoreSum().mean(0) == 0.0);
}

TEST_CASE("thresholds: means, no data, per record across merged parts and through JSON") {
  ScoreThresholds t;
  t.min[static_cast<int>(ScoreMetric::overall)] = 0.8;
  t.min[static_cast<int>(ScoreMetric::arguments)] = 0.5;
  ScoreSummary s;
  ScoreResult a, b;
  a.selection = a.overall = 0.9;
  b.selection = b.overall = 0.6;
  s.add(a);
  s.add(b);
  auto r = check_thresholds(s, t);
  REQUIRE(r.size() == 2);
  CHECK(r[0].metric == ScoreMetric::overall);
  CHECK(*r[0].value == doctest::Approx(0.75));
  CHECK_FALSE(r[0].pass);
  CHECK_FALSE(r[1].value);  // no record has arguments: the threshold fails
  CHECK_FALSE(r[1].pass);
  CHECK(exit_status(s, t) == 1);
  CHECK(exit_status(s) == 0);
  CHECK(score_summary_text(s, t).find("--min-overall 0.8: FAIL, mean 0.75 is 0.05 short\n") != std::string::npos);
  // Per record: parts scored apart keep input order when merged, also after a JSON trip.
  t.per_record = true;
  ScoreSummary p1, p2;
  p1.below.push_back({1, "c2", ScoreMetric::overall, 0.5});
  p1.below.push_back({7, "c8", ScoreMetric::overall, 0.25});
  p2.below.push_back({3, "c4", ScoreMetric::arguments, 0});
  ScoreSummary back;
  std::string error;
  REQUIRE(ScoreSummary::from_json(p2.to_json(), &back, &error));
  p1.merge(back);
  REQUIRE(p1.below.size() == 3);
  CHECK(p1.below[1].id == "c4");
  CHECK(p1.below[1].metric == ScoreMetric::arguments);
  r = check_thresholds(p1, t);
  CHECK(r[0].failing == 2);
  CHECK(r[1].failing == 1);
  CHECK(score_summary_json(p1, t).find(R"("failing":[{"id":"c2","metric":"overall","value":0.5},{"id":"c4")") !=
        std::string::npos);
}

// The command line, the Python package and the Dask runner share these spellings: one
// parser, so a bad value is refused (with the same message) by all of them.
TEST_CASE("score option spellings: the command line's values and messages") {
  ScoreSpellings in;
  ScoreRunOptions o;
  std::string error;
  REQUIRE(make_score_run_options(in, &o, &error));
  CHECK(o.format == ScoreFormat::text);
  CHECK(o.scoring.selection_weight == 0.6);
  CHECK(o.scoring.ordering_weight == 0.4);
  in.format = "jsonl";
  in.weights = "1,3";
  in.tool_args_for = {"refund=subset"};
  in.min[static_cast<int>(ScoreMetric::ordering)] = 0.5;
  in.per_record = true;
  REQUIRE(make_score_run_options(in, &o, &error));
  CHECK(o.format == ScoreFormat::jsonl);
  CHECK(o.scoring.ordering_weight == 3.0);
  REQUIRE(o.scoring.tool_args_for.size() == 1);
  CHECK(o.scoring.tool_args_for[0].first == "refund");
  CHECK(o.scoring.tool_args_for[0].second == ArgumentMode::subset);
  CHECK(o.thresholds.per_record);
  CHECK(*o.thresholds.min[static_cast<int>(ScoreMetric::ordering)] == 0.5);

  auto refused = [&](ScoreSpellings bad) {
    ScoreRunOptions x;
    std::string e;
    CHECK_FALSE(make_score_run_options(bad, &x, &e));
    return e;
  };
  ScoreSpellings b;
  b.weights = "1e308,1e308";  // each finite, their sum is not: overall would be NaN
  CHECK(refused(b) == "--weights '1e308,1e308': expected SELECTION,ORDERING (two non-negative numbers, not both 0)");
  b.weights = "0,0";
  CHECK(!refused(b).empty());
  b = {};
  b.weights = "1,x";
  CHECK(!refused(b).empty());
  b = {};
  b.format = "xml";
  CHECK(refused(b) == "unknown --format 'xml'");
  b = {};
  b.tool_args_for = {"=exact"};
  CHECK(refused(b) == "--tool-args-for '=exact': expected NAME=exact|ignore|subset|superset");
  b = {};
  b.per_record = true;
  CHECK(refused(b).rfind("--per-record applies thresholds", 0) == 0);
  CHECK(valid_score_weights(0, 1));
  CHECK_FALSE(valid_score_weights(-1, 2));
  CHECK_FALSE(valid_score_weights(1e308, 1e308));
}

namespace {
// `text` as the first record of mem.jsonl, padded as RecordSource pads what it reads.
RawRecord record_of(const std::string& text) {
  RawRecord rec;
  rec.origin = RecordOrigin{"mem.jsonl", 1, 1, 0};
  rec.text.reserve(text.size() + kRecordPadding);
  rec.text = text;
  return rec;
}

// One record scored by a reader with these options: its output, messages and summary.
std::string score_one(ScoreRecordReader& reader, const std::string& text) {
  RawRecord rec = record_of(text);
  std::string out, err;
  ScoreSummary s;
  reader.read(rec, out, err, s);
  return out + "--- stderr\n" + err + "--- summary\n" + s.to_json();
}
}  // namespace

TEST_CASE("a record read one message at a time scores as when read whole") {
  ScoreRunOptions whole, by_message;
  whole.format = by_message.format = ScoreFormat::jsonl;
  whole.read_by_message_above = SIZE_MAX;
  by_message.read_by_message_above = 0;
  ScoreRecordReader a(whole), b(by_message);
  std::vector<std::string> records;
  for (const char* file : {"agentevals.jsonl", "bad.jsonl", "duplicates.jsonl", "formats.jsonl", "records.jsonl",
                           "session.jsonl", "shapes.jsonl"}) {
    std::string text = slurp(TRAJCHECK_TEST_DIR "/data/score/" + std::string(file));
    for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
      nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      if (nl > at) records.push_back(text.substr(at, nl - at));
    }
  }
  // What the cursor leaves to the other readers, and ids and names decoded from escapes
  // (copied out of the parser's buffer, which the next message reuses).
  const std::string call = R"({"role":"assistant","content":"","tool_calls":[{"id":"c\u0031","type":"function","function":{"name":"t\u0061","arguments":"{\"x\":1}"}}]})";
  const std::string result = R"({"role":"tool","tool_call_id":"c1","content":"ok"})";
  const std::string sides = "[" + call + "," + result + "," + call + "]";
  records.push_back(R"({"id":"e","outputs":)" + sides + R"(,"reference_outputs":)" + sides + "}");
  records.push_back(R"({"id":5 ,"outputs": )" + sides + "\n,\t\"reference_outputs\":[" + call + "] } ");
  records.push_back(R"({"i\u0064":"k","outputs":)" + sides + R"(,"reference_outputs":)" + sides + "}");
  records.push_back(R"({"outputs":{"messages":)" + sides + R"(},"reference_outputs":)" + sides + "}");
  records.push_back(R"({"outputs":)" + sides + R"(,"reference_outputs":[]})");
  records.push_back(R"({"outputs":)" + sides + R"(,"reference_outputs":[1,2]})");
  records.push_back(R"({"outputs":)" + sides + R"(,"outputs":)" + sides + "}");
  records.push_back(R"({"outputs":)" + sides + R"(,"actual":)" + sides + R"(,"expected":["ta"]})");
  records.push_back(R"({"outputs":)" + sides + R"(,"reference_outputs":)" + sides + "} x");
  records.push_back(R"({"outputs":)" + sides + R"(,"reference_outputs":)" + sides + R"(,"meta":{"a":[1,{"b":"]}"}]}})");
  records.push_back(R"({"case_id":"c","trace_id":3,"outputs":)" + sides + R"(,"reference_outputs":)" + sides + "}");
  const std::size_t base = records.size();
  for (std::size_t r = 0; r < base; ++r) {
    CAPTURE(records[r]);
    CHECK(score_one(b, records[r]) == score_one(a, records[r]));
  }
  // Byte-level mutations of a record of each shape: whatever either reading makes of it, the
  // same (the cursor's splitting is only trusted where simdjson then reads each piece).
  const std::string mutations[] = {"\"", "{", "}", "[", "]", ",", ":", "\\", " ", "x", "1"};
  for (std::size_t r : {std::size_t{0}, base - 11, base - 2}) {
    const std::string& text = records[r];
    for (std::size_t i = 0; i < text.size(); i += 3) {
      for (const std::string& m : mutations) {
        std::string changed = text;
        if ((i / 3) % 2) changed.replace(i, 1, m);
        else changed.insert(i, m);
        CAPTURE(changed);
        REQUIRE(score_one(b, changed) == score_one(a, changed));
      }
      std::string cut = text;
      cut.erase(i, 1);
      CAPTURE(cut);
      REQUIRE(score_one(b, cut) == score_one(a, cut));
    }
  }
}

TEST_CASE("a record read one message at a time lets go of its text once its calls are read") {
  ScoreRunOptions o;
  o.format = ScoreFormat::jsonl;
  o.read_by_message_above = 64;
  ScoreRecordReader reader(o);
  const std::string call = R"({"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"ta","arguments":"{\"x\":1}"}}]})";
  const std::string large = R"({"id":"e","outputs":[)" + call + R"(],"reference_outputs":[)" + call + "]}";
  const std::string small = R"({"outputs":[],"reference_outputs":[]})";
  const std::string general = R"({"outputs":[)" + call + R"(],"reference_outputs":["ta"]})";  // a PATH
  REQUIRE(small.size() <= o.read_by_message_above);
  auto read = [&](const std::string& text, bool let_go) {
    RawRecord rec = record_of(text);
    std::string out, err;
    ScoreSummary s;
    if (let_go) reader.read(rec, out, err, s);
    else reader.read(static_cast<const RawRecord&>(rec), out, err, s);
    return std::pair{out, rec.text.capacity()};
  };
  auto [out, kept] = read(large, true);
  CHECK(out.rfind(R"({"id":"e","selection":1,)", 0) == 0);
  CHECK(kept < large.size());  // what an empty string holds
  auto [same, held] = read(large, false);
  CHECK(same == out);
  CHECK(held >= large.size());
  CHECK(read(small, true).second >= small.size());
  // A record the direct reader leaves to the general one is read from its text, which stays.
  auto [path_out, path_kept] = read(general, true);
  CHECK(path_out.find("\"selection\"") != std::string::npos);
  CHECK(path_kept >= general.size());
  // So is one that repeats a call when error patterns are given, once its calls are read.
  o.reading.error_patterns = {"fail"};
  reader = ScoreRecordReader(o);
  const std::string repeated = R"({"id":"r","outputs":[)" + call + "," + call + R"(],"reference_outputs":[)" + call + "]}";
  auto [repeated_out, repeated_kept] = read(repeated, true);
  CHECK(repeated_out == read(repeated, false).first);
  CHECK(repeated_out.find(R"("duplicates":1)") != std::string::npos);
  CHECK(repeated_kept >= repeated.size());
}
