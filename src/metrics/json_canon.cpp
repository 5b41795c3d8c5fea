// Canonical JSON text for argument comparison: sorted keys, numbers printed by value, so deep
// equality of values is equality of their canonical bytes.
#include "metrics/json_canon.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace trajcheck::metrics {

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", u);
      }
    } else {
      out += c;
    }
  }
  out += '"';
}

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
      std::vector<std::pair<std::string, std::string>> kv;
      simdjson::dom::object obj;
      if (e.get_object().get(obj) != simdjson::SUCCESS) break;
      for (auto field : obj) {
        std::string v;
        canon(field.value, v);
        kv.emplace_back(std::string(field.key), std::move(v));
      }
      std::stable_sort(kv.begin(), kv.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      out += '{';
      for (std::size_t i = 0; i < kv.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, kv[i].first);
        out += ':';
        out += kv[i].second;
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
  if (root.type() != simdjson::dom::element_type::OBJECT) {
    a.object = false;
    canon(root, arena_);
    finish();
    return a;
  }
  sort_buf_.clear();
  simdjson::dom::object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) obj = {};
  for (auto field : obj) {
    scratch_.clear();
    canon(field.value, scratch_);
    sort_buf_.emplace_back(std::string(field.key), scratch_);
  }
  std::stable_sort(sort_buf_.begin(), sort_buf_.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  // Duplicate keys: the last one wins, as in most JSON readers.
  std::size_t w = 0;
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    if (w > 0 && sort_buf_[w - 1].first == sort_buf_[i].first) sort_buf_[w - 1] = sort_buf_[i];
    else sort_buf_[w++] = sort_buf_[i];
  }
  sort_buf_.resize(w);
  arena_ += '{';
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    if (i) arena_ += ',';
    CanonMember m;
    append_json_string(arena_, sort_buf_[i].first);
    arena_ += ':';
    m.value_off = static_cast<std::uint32_t>(arena_.size());
    arena_ += sort_buf_[i].second;
    m.value_len = static_cast<std::uint32_t>(sort_buf_[i].second.size());
    members_.push_back(m);
  }
  arena_ += '}';
  finish();
  // Decoded keys after the whole text (the whole slice stays contiguous).
  for (std::size_t i = 0; i < sort_buf_.size(); ++i) {
    CanonMember& m = members_[a.members_begin + i];
    m.key_off = static_cast<std::uint32_t>(arena_.size());
    arena_ += sort_buf_[i].first;
    m.key_len = static_cast<std::uint32_t>(sort_buf_[i].first.size());
  }
  a.members_end = static_cast<std::uint32_t>(members_.size());
  return a;
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

}  // namespace trajcheck::metrics
