// Records validated by simdjson's DOM parser, read through its tape and stage 1's structural
// indexes (see tape_value.hpp): the parse, container spans and canonical raw text.
#include "readers/tape_value.hpp"

#include <algorithm>
#include <vector>

namespace trajcheck::detail {

namespace {

// A member name and a 64-bit fingerprint of it: equal names have equal fingerprints, so names
// are told apart by comparing integers, and by their bytes only when the fingerprints agree.
struct Name {
  std::uint64_t fingerprint;
  std::string_view text;
  bool operator==(const Name& o) const { return fingerprint == o.fingerprint && text == o.text; }
  bool operator<(const Name& o) const {
    return fingerprint != o.fingerprint ? fingerprint < o.fingerprint : text < o.text;
  }
};

// The first and the last eight bytes and the length: tells apart the names of one object
// (keys sharing a long prefix still differ at their ends) in a few instructions. `s` lies in
// the DOM parser's string buffer, which simdjson allocates SIMDJSON_PADDING bytes larger than
// its strings can ever fill (5/3 of the record's size, what `"",` takes), so the eight bytes
// at its start are readable however short it is; the bytes past its end are masked off.
std::uint64_t fingerprint(std::string_view s) {
  std::uint64_t head = 0, tail = 0;
  std::memcpy(&head, s.data(), 8);
  if (s.size() < 8) head &= (std::uint64_t{1} << (8 * s.size())) - 1;
  if (s.size() > 8) std::memcpy(&tail, s.data() + s.size() - 8, 8);
  return head ^ (tail * 0x9E3779B97F4A7C15ull) ^ (static_cast<std::uint64_t>(s.size()) << 56);
}

// Per source character: how a token starting with it changes the nesting depth, and whether
// it is one of JSON's four blanks.
struct TokenTables {
  std::int8_t depth[256] = {};
  std::uint8_t blank[256] = {};
  constexpr TokenTables() {
    depth[static_cast<unsigned char>('{')] = depth[static_cast<unsigned char>('[')] = 1;
    depth[static_cast<unsigned char>('}')] = depth[static_cast<unsigned char>(']')] = -1;
    for (char c : {' ', '\t', '\n', '\r'}) blank[static_cast<unsigned char>(c)] = 1;
  }
};
constexpr TokenTables kTokens;

}  // namespace

bool TapeDoc::parse(simdjson::dom::parser& parser, std::string_view text) {
  // The tape and structural-index layout read here is simdjson 3's (checked on 3.0.1, the
  // Debian 12 package); another major version reads every record the ondemand way until it
  // is checked (readers_tape_test then fails on purpose).
  if (simdjson::SIMDJSON_VERSION_MAJOR != 3) return false;
  if (text.size() > kMaxRecord) return false;
  // The parser's default depth limit is the ondemand reader's: a record too deep for one is
  // too deep for the other, and is reported by the ondemand reader.
  simdjson::dom::element root;
  if (parser.parse(text.data(), text.size(), false).get(root)) return false;
  if (!parser.implementation || parser.implementation->n_structural_indexes == 0) return false;
  text_ = text.data();
  idx_ = parser.implementation->structural_indexes.get();
  tape_ = parser.doc.tape.get();
  strings_ = parser.doc.string_buf.get();
  // The root word, then the value; a record the readers can take is an object or an array
  // (chat messages).
  if ((tape_[0] >> 56) != 'r') return false;
  char top = static_cast<char>(tape_[1] >> 56);
  return (top == '{' || top == '[') && at(0) == top && member_names_unique();
}

bool TapeDoc::member_names_unique() const {
  // One pass over the tape. The names of every open object of two members or more are kept
  // on one stack (an inner object's above its parent's) and compared when it closes; the
  // tape word opening an object holds its member count (saturated at 2^24 - 1).
  struct Open {
    std::uint32_t first_name;  // in `names`, or kUnchecked
    bool object;
  };
  constexpr std::uint32_t kUnchecked = 0xffffffffu;  // an array, or an object of one member
  thread_local std::vector<Name> names;
  thread_local std::vector<Open> open;
  names.clear();
  open.clear();
  auto unique = [](Name* b, Name* e) {
    std::size_t n = static_cast<std::size_t>(e - b);
    if (n <= 8) {
      for (const Name* i = b + 1; i < e; ++i)
        for (const Name* j = b; j != i; ++j)
          if (*i == *j) return false;
      return true;
    }
    std::sort(b, e);  // the names are dropped after this check: sorted in place
    return std::adjacent_find(b, e) == e;
  };
  bool name_next = false;  // inside an object, the next word is a member name (or its close)
  for (std::uint32_t t = 1;;) {
    const std::uint64_t w = tape_[t];
    const char type = static_cast<char>(w >> 56);
    if (name_next && type == '"') {
      if (open.back().first_name != kUnchecked) {
        std::string_view name;
        string_at(t, &name);
        names.push_back({fingerprint(name), name});
      }
      name_next = false;
      ++t;
      continue;
    }
    switch (type) {
      case 'r': return true;
      case '{': {
        const std::uint32_t members = static_cast<std::uint32_t>(w >> 32) & 0xFFFFFFu;
        open.push_back({members >= 2 ? static_cast<std::uint32_t>(names.size()) : kUnchecked, true});
        name_next = true;
        ++t;
        continue;
      }
      case '[':
        open.push_back({kUnchecked, false});
        name_next = false;
        ++t;
        continue;
      case '}':
        if (open.back().first_name != kUnchecked) {
          if (!unique(names.data() + open.back().first_name, names.data() + names.size())) return false;
          names.resize(open.back().first_name);
        }
        open.pop_back();
        ++t;
        break;
      case ']':
        open.pop_back();
        ++t;
        break;
      case 'l': case 'u': case 'd': t += 2; break;
      default: ++t;
    }
    name_next = !open.empty() && open.back().object;  // a value ended: a name or the close follows
  }
}

void TapeDoc::remember(std::uint32_t k) const {
  // Every token of the container once, with no branch but the one that finds its close:
  // blanks between two tokens end right before the second one (inside strings and scalars
  // there are no token starts).
  int depth = 1, deepest = 1;
  unsigned blanks = 0;
  std::uint32_t j = k + 1;
  for (;; ++j) {
    const std::uint32_t at = idx_[j];
    blanks |= kTokens.blank[static_cast<unsigned char>(text_[at - 1])];
    depth += kTokens.depth[static_cast<unsigned char>(text_[at])];
    deepest = std::max(deepest, depth);
    if (depth == 0) break;
  }
  memo_k_ = k;
  memo_ = Span{j, blanks == 0, deepest > kMaxJsonDepth};
  memo_walked_ = true;
}

bool TapeDoc::canonical(std::uint32_t k) const {
  const Span& s = span(k);
  if (!s.minified || s.too_deep) return false;
  // Backslashes appear only in strings, each starting an escape.
  const char* p = text_ + idx_[k];
  const char* end = text_ + idx_[s.close];
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (!p) break;
    if (p[1] == 'u' || p[1] == '/') return false;
    p += 2;
  }
  return true;
}

std::string_view canonical_tape_text(const TapeValue& v) {
  const TapeDoc& d = *v.doc();
  std::uint32_t k = v.token_index();
  char c = d.at(k);
  if (c != '{' && c != '[') return {};
  if (!d.canonical(k)) return {};
  std::uint32_t close = d.close_of(k);
  return std::string_view(d.pos(k), static_cast<std::size_t>(d.pos(close) - d.pos(k)) + 1);
}

namespace {

// One string token, as write_value writes it: its source text when canonical, else decoded
// and escaped again.
bool write_string(const TapeDoc& d, std::uint32_t k, std::uint32_t t, std::string& out) {
  std::string_view raw = d.token(k);
  if (std::size_t size = canonical_string_size(raw)) {
    out.append(raw.data(), size);
    return true;
  }
  std::string_view s;
  if (!d.string_at(t, &s)) return false;
  append_json_string(out, s);
  return true;
}

}  // namespace

bool write_tape_value(const TapeValue& v, std::string& out) {
  const TapeDoc& d = *v.doc();
  std::uint32_t k = v.token_index(), t = v.tape_index();
  char c = d.at(k);
  if (c == '"') return write_string(d, k, t, out);
  if (c != '{' && c != '[') {
    out.append(trim_ws(d.token(k)));  // a number keeps its source text; or true/false/null
    return true;
  }
  std::uint32_t close = d.close_of(k);
  if (d.canonical(k)) {
    out.append(d.pos(k), static_cast<std::size_t>(d.pos(close) - d.pos(k)) + 1);
    return true;
  }
  if (d.span(k).too_deep) return false;
  // Token by token: blanks dropped, strings with other escapes rewritten.
  for (std::uint32_t j = k; j <= close; ++j) {
    c = d.at(j);
    switch (c) {
      case '{': case '[': case '}': case ']':
        out.push_back(c);
        ++t;
        break;
      case ',': case ':':
        out.push_back(c);
        break;
      case '"':
        if (!write_string(d, j, t, out)) return false;
        ++t;
        break;
      case 't': case 'f': case 'n':
        out.append(trim_ws(d.token(j)));
        ++t;
        break;
      default:
        out.append(trim_ws(d.token(j)));
        t += 2;
    }
  }
  return true;
}

}  // namespace trajcheck::detail
