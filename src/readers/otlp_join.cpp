// TraceJoiner (trajcheck/reader.hpp): the parts of OTLP traces held by traceId until each
// trace is complete, then joined into one trajectory, steps in span start order.
#include <algorithm>
#include <chrono>
#include <list>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>
#include <simdjson.h>

#include "readers/parser_impl.hpp"

namespace trajcheck {

namespace {

std::uint64_t steady_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::uint64_t part_bytes(const Trajectory& t) {
  std::uint64_t n = t.arena_size() + t.steps().size() * (sizeof(Step) + sizeof(SpanInfo)) + sizeof(Trajectory);
  for (const std::string& w : t.warnings) n += w.size() + sizeof(std::string);
  return n;
}

struct HeldTrace {
  std::string id;
  std::vector<Trajectory> parts;
  std::uint64_t bytes = 0, last_ms = 0, first_record = 0;
  bool root_ended = false;
  std::string early_warning;  // set when let go before it was complete
};

// The members of a metadata object but the totals append_span_totals writes.
void metadata_without_totals(std::string_view meta, detail::ObjectWriter& w) {
  meta = detail::trim_ws(meta);
  if (meta.size() <= 2) return;
  simdjson::dom::parser p;
  simdjson::dom::object o;
  if (p.parse(meta.data(), meta.size()).get_object().get(o)) return;
  for (auto field : o) {
    std::string_view k = field.key;
    if (k == "latency_ms" || k == "tokens" || k == "input_tokens" || k == "output_tokens") continue;
    w.key(k).append(simdjson::minify(field.value));
  }
}

// Joins the parts of one trace into `out`.
void join_parts(HeldTrace& h, Trajectory& out) {
  std::stable_sort(h.parts.begin(), h.parts.end(),
                   [](const Trajectory& a, const Trajectory& b) { return a.origin.record < b.origin.record; });
  const Trajectory& first = h.parts.front();
  out.clear();
  out.origin = first.origin;
  out.set_trace_id(out.store(first.trace_id()));
  if (!first.context().empty()) out.set_context(out.store(first.context()));
  for (const Trajectory& p : h.parts) out.warnings.insert(out.warnings.end(), p.warnings.begin(), p.warnings.end());
  if (!h.early_warning.empty()) out.warnings.push_back(h.early_warning);
  // As the reader orders one record's spans: by start time, a root first among spans that
  // start together, then in input order.
  struct Key {
    std::uint64_t start;
    bool child;
    std::uint32_t part, step;
  };
  std::vector<Key> keys;
  for (std::uint32_t p = 0; p < h.parts.size(); ++p)
    for (std::uint32_t i = 0; i < h.parts[p].steps().size(); ++i) {
      const bool has = i < h.parts[p].spans.size();
      keys.push_back(Key{has ? h.parts[p].spans[i].start_ns : 0, has && !h.parts[p].spans[i].root, p, i});
    }
  std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return a.start != b.start ? a.start < b.start : a.child < b.child;
  });
  // A call read from a model call's gen_ai.output.messages is dropped when a part of the
  // trace has an execute_tool span with its id, or an earlier part read it too.
  auto from_messages = [](const Trajectory& t, const Step& st) {
    return t.text(st.extra).rfind(R"({"source":"gen_ai.output.messages")", 0) == 0;
  };
  std::vector<std::string_view> span_calls, message_calls;  // ids
  for (const Trajectory& p : h.parts)
    for (const Step& st : p.steps())
      if (st.type == StepType::tool_call && !st.id.empty() && !from_messages(p, st)) span_calls.push_back(p.text(st.id));
  ToolTable* tools = out.tools();
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const Trajectory& from = h.parts[keys[k].part];
    const Step& in = from.steps()[keys[k].step];
    if (in.type == StepType::tool_call && !in.id.empty() && from_messages(from, in)) {
      std::string_view id = from.text(in.id);
      if (std::find(span_calls.begin(), span_calls.end(), id) != span_calls.end() ||
          std::find(message_calls.begin(), message_calls.end(), id) != message_calls.end())
        continue;
      message_calls.push_back(id);
    }
    Step st = in;
    st.for_each_slice([&](Slice& s) {
      if (!s.empty()) s = out.store(from.text(s));
    });
    if (st.type == StepType::tool_call && tools) st.tool = tools->intern(out.text(st.tool_name));
    st.turn = static_cast<std::uint32_t>(out.steps().size());
    out.steps().push_back(st);
    out.spans.push_back(keys[k].step < from.spans.size() ? from.spans[keys[k].step] : SpanInfo{});
  }
  // A call read from messages whose response is in another part (a later model call's
  // gen_ai.input.messages, exported in another request).
  std::vector<std::pair<std::string, std::string>> responses;
  bool looked = false;
  for (Step& st : out.steps()) {
    if (st.type != StepType::tool_call || !st.result.empty() || st.id.empty() || !from_messages(out, st)) continue;
    if (!looked) {
      looked = true;
      simdjson::dom::parser p;
      for (const Step& other : out.steps()) {
        simdjson::dom::object x;
        std::string_view text;
        std::string_view extra = out.text(other.extra);
        if (extra.find("gen_ai.input.messages") == std::string_view::npos) continue;
        if (p.parse(extra.data(), extra.size()).get_object().get(x) || x["gen_ai.input.messages"].get_string().get(text))
          continue;
        std::string copy(text);  // the parser's buffer is reused below
        detail::for_message_parts(copy, "tool_call_response", [&](simdjson::dom::object part) {
          std::string_view id;
          simdjson::dom::element response;
          if (part["id"].get_string().get(id) || part["response"].get(response)) return;
          responses.emplace_back(std::string(id), simdjson::minify(response));
        });
      }
    }
    for (const auto& [id, response] : responses)
      if (id == out.text(st.id)) {
        st.result = out.store(response);
        break;
      }
  }
  if (h.parts.size() == 1) {
    if (!first.metadata().empty()) out.set_metadata(out.store(first.metadata()));
    return;
  }
  std::string meta;
  detail::ObjectWriter w(meta);
  metadata_without_totals(first.metadata(), w);
  detail::append_span_totals(out.spans, {}, w);
  std::string_view m = w.finish();
  if (!m.empty()) out.set_metadata(out.store(m));
}

}  // namespace

struct TraceJoiner::Impl {
  TraceJoinOptions o;
  mutable std::mutex mu;
  std::list<HeldTrace> lru;  // least recently added to first
  std::unordered_map<std::string_view, std::list<HeldTrace>::iterator> by_id;  // keys: HeldTrace::id
  std::uint64_t bytes = 0, early = 0;

  std::uint64_t now() const { return o.clock ? o.clock() : steady_ms(); }

  HeldTrace take_out(std::list<HeldTrace>::iterator it) {
    by_id.erase(it->id);
    bytes -= it->bytes;
    HeldTrace h = std::move(*it);
    lru.erase(it);
    return h;
  }
};

TraceJoiner::TraceJoiner(TraceJoinOptions options) : impl_(std::make_unique<Impl>()) { impl_->o = std::move(options); }
TraceJoiner::~TraceJoiner() = default;

bool TraceJoiner::offer(const Trajectory& t, Trajectory& out, const TraceParser::Emit& emit) {
  Impl& m = *impl_;
  if (t.spans.empty() || m.o.max_bytes == 0) return false;
  std::vector<HeldTrace> ready;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    const std::uint64_t now = m.now();
    auto found = m.by_id.find(t.trace_id());
    std::list<HeldTrace>::iterator it;
    if (found == m.by_id.end()) {
      m.lru.emplace_back();
      it = std::prev(m.lru.end());
      it->id.assign(t.trace_id());
      it->first_record = t.origin.record;
      m.by_id.emplace(it->id, it);
    } else {
      it = found->second;
      m.lru.splice(m.lru.end(), m.lru, it);  // now the most recent
    }
    it->parts.push_back(t);
    it->parts.back().set_tools(nullptr);
    std::uint64_t added = part_bytes(it->parts.back());
    it->bytes += added;
    m.bytes += added;
    it->last_ms = now;
    it->first_record = std::min(it->first_record, t.origin.record);
    for (const SpanInfo& sp : t.spans) it->root_ended |= sp.root && sp.end_ns != 0;
    // Complete (a stream): the root span ended and nothing came for idle_ms.
    if (m.o.idle_ms)
      for (auto i = m.lru.begin(); i != m.lru.end() && now - i->last_ms >= m.o.idle_ms;) {
        auto next = std::next(i);
        if (i->root_ended) ready.push_back(m.take_out(i));
        i = next;
      }
    // Over the bound: let go of the traces that waited longest, saying so.
    while (m.bytes > m.o.max_bytes && !m.lru.empty()) {
      HeldTrace h = m.take_out(m.lru.begin());
      const RecordOrigin& at = h.parts.front().origin;
      h.early_warning = fmt::format(
          "{}:{}:{}: warning: OTLP trace {} is checked before the end of the input: the spans held to join "
          "traces passed {} bytes (docs/limits.md); spans of it read later form another trace with this trace_id",
          at.file, at.line, at.column, h.id, m.o.max_bytes);
      ++m.early;
      ready.push_back(std::move(h));
    }
  }
  for (HeldTrace& h : ready) {
    join_parts(h, out);
    if (emit) emit(out);
  }
  return true;
}

void TraceJoiner::finish(Trajectory& out, const TraceParser::Emit& emit) {
  Impl& m = *impl_;
  std::vector<HeldTrace> all;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    while (!m.lru.empty()) all.push_back(m.take_out(m.lru.begin()));
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const HeldTrace& a, const HeldTrace& b) { return a.first_record < b.first_record; });
  for (HeldTrace& h : all) {
    join_parts(h, out);
    if (emit) emit(out);
    h = HeldTrace{};  // memory goes as the traces do
  }
}

std::size_t TraceJoiner::poll(Trajectory& out, const TraceParser::Emit& emit) {
  Impl& m = *impl_;
  std::vector<HeldTrace> ready;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (!m.o.idle_ms) return 0;
    const std::uint64_t now = m.now();
    for (auto i = m.lru.begin(); i != m.lru.end() && now - i->last_ms >= m.o.idle_ms;) {
      auto next = std::next(i);
      if (i->root_ended) ready.push_back(m.take_out(i));
      i = next;
    }
  }
  for (HeldTrace& h : ready) {
    join_parts(h, out);
    if (emit) emit(out);
  }
  return ready.size();
}

namespace {
void set_eviction_warning(HeldTrace& h, std::string_view why) {
  const RecordOrigin& at = h.parts.front().origin;
  h.early_warning = fmt::format("{}:{}:{}: warning: OTLP trace {} {}", at.file, at.line, at.column, h.id, why);
}
}  // namespace

bool TraceJoiner::evict(std::string_view trace_id, std::string_view why, Trajectory& out,
                        const TraceParser::Emit& emit) {
  Impl& m = *impl_;
  HeldTrace h;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    auto found = m.by_id.find(trace_id);
    if (found == m.by_id.end()) return false;
    h = m.take_out(found->second);
  }
  set_eviction_warning(h, why);
  join_parts(h, out);
  if (emit) emit(out);
  return true;
}

bool TraceJoiner::evict_oldest(std::uint64_t min_idle_ms, std::string_view why, Trajectory& out,
                               const TraceParser::Emit& emit) {
  Impl& m = *impl_;
  HeldTrace h;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    if (m.lru.empty() || m.now() - m.lru.front().last_ms < min_idle_ms) return false;
    h = m.take_out(m.lru.begin());
  }
  set_eviction_warning(h, why);
  join_parts(h, out);
  if (emit) emit(out);
  return true;
}

std::size_t TraceJoiner::held_traces() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->lru.size();
}
std::uint64_t TraceJoiner::held_bytes() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->bytes;
}
std::uint64_t TraceJoiner::early_traces() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->early;
}

}  // namespace trajcheck
