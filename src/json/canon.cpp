// Canonical JSON text for argument comparison: sorted keys, numbers printed by value, so deep
// equality of values is equality of their canonical bytes.
#include "json/canon.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "json/ondemand.hpp"

namespace trajcheck::json {

namespace {
void append_number(std::string& out, double d) {
  // Integral doubles print like integers so that 1 == 1.0.
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
    fmt::format_to(std::back_inserter(out), "{}", static_cast<std::int64_t>(d));
  } else {
    fmt::format_to(std::back_inserter(out), "{}", d);
  }
}
}  // namespace

void ArgCanon::clear() {
  arena_.clear();
  members_.clear();
}

void ArgCanon::canon(simdjson::dom::element e, std::string& out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::ARRAY: {
      out += '[';
      bool first = true;
      simdjson::dom::array arr;
      if (e.get_array().get(arr) != simdjson::SUCCESS) break;
      for (simdjson::dom::element v : arr) {
        if (!first) out += ',';
        first = false;
        canon(v, out);
      }
      out += ']';
      break;
    }
    case element_type::OBJECT: {
      // Keys are views into the parser's document; values are canonicalized into one buffer.
      struct Kv {
        std::string_view key;
        std::size_t off, len;
      };
      std::vector<Kv> kv;
      std::string vals;
      simdjson::dom::object obj;
      if (e.get_object().get(obj) != simdjson::SUCCESS) break;
      for (auto field : obj) {
        std::size_t off = vals.size();
        canon(field.value, vals);
        kv.push_back({field.key, off, vals.size() - off});
      }
      std::stable_sort(kv.begin(), kv.end(), [](const Kv& x, const Kv& y) { return x.key < y.key; });
      out += '{';
      for (std::size_t i = 0; i < kv.size(); ++i) {
        // (Text the readers stored names each member once; any other: the last one wins.)
        if (i + 1 < kv.size() && kv[i].key == kv[i + 1].key) continue;
        if (out.back() != '{') out += ',';
        append_json_string(out, kv[i].key);
        out += ':';
        out.append(vals, kv[i].off, kv[i].len);
      }
      out += '}';
      break;
    }
    case element_type::INT64: fmt::format_to(std::back_inserter(out), "{}", e.get_int64().value_unsafe()); break;
    case element_type::UINT64: {
      std::uint64_t u = e.get_uint64().value_unsafe();
      if (u < (std::uint64_t(1) << 63)) fmt::format_to(std::back_inserter(out), "{}", u);
      else append_number(out, static_cast<double>(u));
      break;
    }
    case element_type::DOUBLE: append_number(out, e.get_double().value_unsafe()); break;
    case element_type::STRING: append_json_string(out, e.get_string().value_unsafe()); break;
    case element_type::BOOL: out += e.get_bool().value_unsafe() ? "true" : "false"; break;
    case element_type::NULL_VALUE: out += "null"; break;
  }
}

CanonArgs ArgCanon::add(std::string_view raw) {
  CanonArgs a;
  a.members_begin = a.members_end = static_cast<std::uint32_t>(members_.size());
  std::size_t start = arena_.size();
  auto finish = [&] {
    a.whole_off = static_cast<std::uint32_t>(start);
    a.whole_len = static_cast<std::uint32_t>(arena_.size() - start);
  };
  if (raw.empty()) {
    arena_ += "{}";
    finish();
    return a;
  }
  simdjson::dom::element root;
  if (parser_.parse(raw.data(), raw.size(), true).get(root) != simdjson::SUCCESS) {
    a.object = false;
    arena_ += '\x01';  // never the first byte of canonical JSON: equals only the same bad text
    append_json_string(arena_, raw);
    finish();
    return a;
  }
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) {
    a.object = false;
    canon(root, arena_);
    finish();
    return a;
  }
  sort_buf_.clear();
  scratch_.clear();
  for (auto field : obj) {
    std::size_t off = scratch_.size();
    canon(field.value, scratch_);
    sort_buf_.push_back({field.key, static_cast<std::uint32_t>(off),
                         static_cast<std::uint32_t>(scratch_.size() - off)});
  }
  write_members(a);
  return a;
}

void ArgCanon::write_members(CanonArgs& a) {
  std::size_t start = arena_.size();
  // Already sorted in most sources; stable so that the last of duplicate keys can win.
  if (!std::is_sorted(sort_buf_.begin(), sort_buf_.end(),
                      [](const Member& x, const Member& y) { return x.key < y.key; }))
    std::stable_sort(sort_buf_.begin(), sort_buf_.end(),
                     [](const Member& x, const Member& y) { return x.key < y.key; });
  std::size_t w = 0;
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    if (w > 0 && sort_buf_[w - 1].key == sort_buf_[i].key) sort_buf_[w - 1] = sort_buf_[i];
    else sort_buf_[w++] = sort_buf_[i];
  }
  sort_buf_.resize(w);
  arena_ += '{';
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    if (i) arena_ += ',';
    CanonMember m;
    append_key(arena_, sort_buf_[i]);
    arena_ += ':';
    m.value_off = static_cast<std::uint32_t>(arena_.size());
    arena_.append(scratch_, sort_buf_[i].off, sort_buf_[i].len);
    m.value_len = sort_buf_[i].len;
    members_.push_back(m);
  }
  arena_ += '}';
  a.whole_off = static_cast<std::uint32_t>(start);
  a.whole_len = static_cast<std::uint32_t>(arena_.size() - start);
  // Decoded keys after the whole text (the whole slice stays contiguous).
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    CanonMember& m = members_[a.members_begin + i];
    m.key_off = static_cast<std::uint32_t>(arena_.size());
    arena_ += sort_buf_[i].key;
    m.key_len = static_cast<std::uint32_t>(sort_buf_[i].key.size());
  }
  a.members_end = static_cast<std::uint32_t>(members_.size());
}

bool ArgCanon::find(const CanonArgs& a, std::string_view key, std::string_view* value) const {
  auto b = members_.begin() + a.members_begin, e = members_.begin() + a.members_end;
  auto it = std::lower_bound(b, e, key, [&](const CanonMember& m, std::string_view k) {
    return this->key(m) < k;
  });
  if (it == e || this->key(*it) != key) return false;
  *value = this->value(*it);
  return true;
}


// ---- On-Demand ----------------------------------------------------------------------------
// The same text as canon() over a DOM element, written in one pass over the source; what is
// validated and how matches the readers' validating minifier, so a value accepted here is one the readers
// would have stored (and canon() would have read back).

namespace {
constexpr int kMaxOdDepth = 64;
namespace od = simdjson::ondemand;
}  // namespace

bool ArgCanon::collect_members(od::object o, std::vector<Member>& members, std::string& values, int depth) {
  // (for_members declines a member named twice: the readers keep such arguments as text.)
  return for_members(o, [&](std::string_view key, bool plain, od::value v) {
    const std::size_t off = values.size();
    if (!canon_od(v, values, depth)) return false;
    members.push_back({key, static_cast<std::uint32_t>(off), static_cast<std::uint32_t>(values.size() - off), plain});
    return true;
  });
}

bool ArgCanon::canon_od(od::value v, std::string& out, int depth) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      if (depth >= kMaxOdDepth) return false;
      od::object o;
      if (v.get_object().get(o)) return false;
      // levels_ was reserved for every depth, so this reference survives deeper levels.
      if (levels_.size() <= static_cast<std::size_t>(depth)) levels_.resize(depth + 1);
      Level& l = levels_[depth];
      l.members.clear();
      l.values.clear();
      // Member values go to this level's buffer; objects inside them use deeper levels.
      if (!collect_members(o, l.members, l.values, depth + 1)) return false;
      std::stable_sort(l.members.begin(), l.members.end(),
                       [](const Member& x, const Member& y) { return x.key < y.key; });
      out += '{';
      for (std::size_t i = 0; i < l.members.size(); ++i) {
        if (out.back() != '{') out += ',';
        append_key(out, l.members[i]);
        out += ':';
        out.append(l.values, l.members[i].off, l.members[i].len);
      }
      out += '}';
      return true;
    }
    case od::json_type::array: {
      if (depth >= kMaxOdDepth) return false;
      od::array a;
      if (v.get_array().get(a)) return false;
      out += '[';
      bool first = true;
      for (auto element : a) {
        od::value ev;
        if (element.get(ev)) return false;
        if (!first) out += ',';
        first = false;
        if (!canon_od(ev, out, depth + 1)) return false;
      }
      out += ']';
      return true;
    }
    case od::json_type::string: {
      // Without escapes or control characters the source text is the canonical text.
      std::string_view quoted;
      if (plain_string_token(v, &quoted)) {
        out.append(quoted);
        return true;
      }
      std::string_view s;
      if (v.get_string().get(s)) return false;
      append_json_string(out, s);
      return true;
    }
    case od::json_type::number: {
      std::string_view text;
      NumberValue n;
      if (!number_token(v, &text, &n)) return false;  // bad syntax, or out of range
      switch (n.kind) {
        case NumberValue::int64: fmt::format_to(std::back_inserter(out), "{}", n.i); break;
        case NumberValue::uint64: append_number(out, static_cast<double>(n.u)); break;  // >= 2^63
        case NumberValue::real: append_number(out, n.d); break;
      }
      return true;
    }
    case od::json_type::boolean: {
      bool b;
      if (v.get_bool().get(b)) return false;
      out += b ? "true" : "false";
      return true;
    }
    case od::json_type::null: {
      bool is_null = false;
      if (v.is_null().get(is_null) || !is_null) return false;
      out += "null";
      return true;
    }
  }
  return false;
}

bool ArgCanon::add_object(od::object o, CanonArgs* out) {
  CanonArgs a;
  a.members_begin = a.members_end = static_cast<std::uint32_t>(members_.size());
  if (levels_.capacity() < kMaxOdDepth + 1) levels_.reserve(kMaxOdDepth + 1);
  sort_buf_.clear();
  scratch_.clear();
  if (!collect_members(o, sort_buf_, scratch_, 1)) return false;
  write_members(a);
  *out = a;
  return true;
}

bool ArgCanon::add_object_text(std::string_view text, od::parser& parser, std::string& padded,
                               CanonArgs* out) {
  if (text.empty()) {
    *out = add({});
    return true;
  }
  padded.assign(text);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (parser.iterate(padded.data(), text.size(), padded.size()).get(doc)) return false;
  od::json_type type;
  if (doc.type().get(type) || type != od::json_type::object) return false;
  od::object o;
  if (doc.get_object().get(o)) return false;
  if (!add_object(o, out)) return false;
  const char* trailing = nullptr;
  if (!doc.current_location().get(trailing)) {
    // Trailing content: the readers reject these arguments. Undo.
    members_.resize(out->members_begin);
    arena_.resize(out->whole_off);
    return false;
  }
  return true;
}

}  // namespace trajcheck::json
