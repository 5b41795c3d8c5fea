// The throughput floor of bench/run.sh: the least any checker of native JSONL must do — parse
// every record with simdjson On-Demand (one parser, reused) and touch each step's tool name.
// `floor --format agentevals` does the same for score records (each tool call's function name).
// `floor --validate` parses each record with simdjson's DOM parser instead, which checks every
// byte of the JSON grammar (On-Demand leaves values nobody reads unchecked): the least a reader
// that rejects invalid records — as TRACES.md asks — must do.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include <simdjson.h>

namespace {

namespace od = simdjson::ondemand;

struct Counts {
  std::uint64_t records = 0, steps = 0, bytes = 0, errors = 0;
  std::uint64_t name_hash = 0;  // every name's bytes feed it, so the work cannot be optimized away
};

void touch(Counts& c, std::string_view name) {
  c.steps++;
  c.name_hash = c.name_hash * 31 + name.size() + static_cast<unsigned char>(name.empty() ? 0 : name[0]);
}

// {"trace_id", "steps": [{"type", "tool", …}]}: each step's "tool" when present.
simdjson::error_code native_record(od::document& doc, Counts& c) {
  od::object root;
  if (auto e = doc.get_object().get(root)) return e;
  od::array steps;
  if (auto e = root.find_field_unordered("steps").get_array().get(steps)) return e;
  for (auto step_value : steps) {
    od::object step;
    if (auto e = step_value.get_object().get(step)) return e;
    std::string_view tool;
    auto field = step.find_field_unordered("tool");
    if (field.error() == simdjson::NO_SUCH_FIELD) {
      touch(c, {});
      continue;
    }
    if (auto e = field.get_string().get(tool)) return e;
    touch(c, tool);
  }
  return simdjson::SUCCESS;
}

// {"id", "outputs": [messages], "reference_outputs": [messages]}: every tool call's name.
simdjson::error_code messages(od::array list, Counts& c) {
  for (auto m : list) {
    od::object msg;
    if (auto e = m.get_object().get(msg)) return e;
    auto calls = msg.find_field_unordered("tool_calls");
    if (calls.error() == simdjson::NO_SUCH_FIELD) continue;
    od::array arr;
    if (auto e = calls.get_array().get(arr)) return e;
    for (auto call : arr) {
      std::string_view name;
      if (auto e = call.find_field_unordered("function").find_field_unordered("name").get_string().get(name))
        return e;
      touch(c, name);
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code agentevals_record(od::document& doc, Counts& c) {
  od::object root;
  if (auto e = doc.get_object().get(root)) return e;
  od::array list;
  if (auto e = root.find_field_unordered("outputs").get_array().get(list)) return e;
  if (auto e = messages(list, c)) return e;
  if (auto e = root.find_field_unordered("reference_outputs").get_array().get(list)) return e;
  return messages(list, c);
}

// The same walks over a fully parsed (and so fully validated) DOM.
void dom_messages(simdjson::dom::array list, Counts& c) {
  for (simdjson::dom::element m : list) {
    simdjson::dom::array calls;
    if (m["tool_calls"].get_array().get(calls)) continue;
    for (simdjson::dom::element call : calls) {
      std::string_view name;
      if (!call["function"]["name"].get_string().get(name)) touch(c, name);
    }
  }
}

simdjson::error_code dom_record(simdjson::dom::element root, bool agentevals, Counts& c) {
  if (agentevals) {
    simdjson::dom::array list;
    if (auto e = root["outputs"].get_array().get(list)) return e;
    dom_messages(list, c);
    if (auto e = root["reference_outputs"].get_array().get(list)) return e;
    dom_messages(list, c);
    return simdjson::SUCCESS;
  }
  simdjson::dom::array steps;
  if (auto e = root["steps"].get_array().get(steps)) return e;
  for (simdjson::dom::element step : steps) {
    std::string_view tool;
    if (step["tool"].get_string().get(tool)) tool = {};
    touch(c, tool);
  }
  return simdjson::SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  bool agentevals = false, validate = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--validate") == 0) {
      validate = true;
    } else if (std::strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
      agentevals = std::strcmp(argv[++i], "agentevals") == 0;
    } else if (!path) {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (!path) {
    std::fputs("usage: floor [--validate] [--format native|agentevals] FILE.jsonl\n", stderr);
    return 2;
  }
  std::FILE* f = std::strcmp(path, "-") == 0 ? stdin : std::fopen(path, "rb");
  if (!f) {
    std::perror(path);
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  // Streams the file through a fixed buffer (doubled only for a line longer than it), as a
  // checker of unbounded input must; each line is parsed in place, the bytes after it (or the
  // buffer's padding) serving as simdjson's padding.
  std::size_t cap = std::size_t{16} << 20;
  std::unique_ptr<char[]> buf(new char[cap + simdjson::SIMDJSON_PADDING]);  // not zero-filled
  std::size_t have = 0;   // bytes in buf
  std::size_t scan = 0;   // bytes of buf already searched for a newline
  od::parser parser;
  simdjson::dom::parser dom_parser;
  Counts c;
  bool eof = false;
  while (!eof) {
    if (have == cap) {  // one line fills the buffer: grow it
      std::unique_ptr<char[]> bigger(new char[cap * 2 + simdjson::SIMDJSON_PADDING]);
      std::memcpy(bigger.get(), buf.get(), have);
      buf = std::move(bigger);
      cap *= 2;
    }
    std::size_t got = std::fread(buf.get() + have, 1, cap - have, f);
    if (got == 0) eof = true;
    have += got;
    c.bytes += got;
    std::size_t pos = 0;  // start of the first unparsed line
    for (;;) {
      char* begin = buf.get() + pos;
      char* nl = static_cast<char*>(std::memchr(buf.get() + scan, '\n', have - scan));
      if (!nl) {
        scan = have;
        if (!eof || pos == have) break;
        nl = buf.get() + have;  // the last line has no newline
      }
      std::size_t len = static_cast<std::size_t>(nl - begin);
      if (len > 0) {
        simdjson::error_code err;
        if (validate) {
          simdjson::dom::element root;
          err = dom_parser.parse(begin, len, false).get(root);
          if (!err) err = dom_record(root, agentevals, c);
        } else {
          od::document doc;
          std::size_t capacity = cap + simdjson::SIMDJSON_PADDING - pos;
          err = parser.iterate(begin, len, capacity).get(doc);
          if (!err) err = agentevals ? agentevals_record(doc, c) : native_record(doc, c);
        }
        if (err) c.errors++;
        c.records++;
      }
      pos = std::min(have, static_cast<std::size_t>(nl - buf.get()) + 1);
      scan = pos;
      if (pos >= have) break;
    }
    if (pos > 0) {
      std::memmove(buf.get(), buf.get() + pos, have - pos);
      have -= pos;
      scan -= pos;
    }
  }
  if (f != stdin) std::fclose(f);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("records %" PRIu64 " steps %" PRIu64 " bytes %" PRIu64 " errors %" PRIu64
              " seconds %.3f MB/s %.1f (check %" PRIu64 ")\n",
              c.records, c.steps, c.bytes, c.errors, secs, static_cast<double>(c.bytes) / 1e6 / secs,
              c.name_hash % 1000);
  return c.errors ? 1 : 0;
}
