// Records validated whole before they are read (see tape_value.hpp): stage 1, the walk that
// checks the rest of the grammar and notes each container's close, and raw values written
// back minified.
#include "readers/tape_value.hpp"

#include <algorithm>
#include <bit>
#include <new>

namespace trajcheck::detail {

namespace {

using Name = TapeScratch::Name;
constexpr std::size_t kKeptNameSlots = 1 << 16;
// 2^64 / the golden ratio: multiplying by it spreads a fingerprint's bits over the high ones.
constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// The first and the last eight bytes and the length: tells apart the names of one object
// (keys sharing a long prefix still differ at their ends) in a few instructions. `s` lies in
// the record (padded by SIMDJSON_PADDING) or in the decoded strings (padded as much), so the
// eight bytes at its start are readable however short it is; the bytes past its end are
// masked off.
std::uint64_t fingerprint(std::string_view s) {
  std::uint64_t head = 0, tail = 0;
  std::memcpy(&head, s.data(), 8);
  if (s.size() < 8) head &= (std::uint64_t{1} << (8 * s.size())) - 1;
  if (s.size() > 8) std::memcpy(&tail, s.data() + s.size() - 8, 8);
  return head ^ (tail * kGolden) ^ (static_cast<std::uint64_t>(s.size()) << 56);
}

bool same(const Name& a, const Name& b) { return a.fingerprint == b.fingerprint && a.text == b.text; }

// No two of the names in [b, e) are equal. A few are compared pairwise; more go through an
// open-addressing table of their fingerprints (`slots`: all zero between calls, at least twice
// as many slots as names), so an object costs linear time in its names whatever its size.
// (Sorting them instead measured a quarter of the whole walk on records with objects of 16-40
// members, as tool results often hold.)
bool all_distinct(const Name* b, const Name* e, std::vector<std::uint32_t>& slots) {
  const std::size_t n = static_cast<std::size_t>(e - b);
  if (n < 2) return true;
  if (n <= 8) {
    for (const Name* i = b + 1; i < e; ++i)
      for (const Name* j = b; j != i; ++j)
        if (same(*i, *j)) return false;
    return true;
  }
  const std::size_t size = std::bit_ceil(2 * n);
  const int shift = 64 - std::countr_zero(size);
  if (slots.size() < size) slots.assign(size, 0);
  bool ok = true;
  for (std::uint32_t i = 0; i < n && ok; ++i) {
    std::size_t h = static_cast<std::size_t>((b[i].fingerprint * kGolden) >> shift);
    for (; slots[h] != 0; h = (h + 1) & (size - 1))
      if (same(b[slots[h] - 1], b[i])) {
        ok = false;
        break;
      }
    slots[h] = i + 1;
  }
  std::fill_n(slots.begin(), size, 0);
  if (slots.size() > kKeptNameSlots) slots = {};  // an unusually large object: not kept
  return ok;
}

constexpr bool blank(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

// A number the DOM parser surely accepts: JSON's syntax, and a magnitude no parse can find out
// of range (an integer of at most 18 digits; a decimal of at most 40 characters whose exponent
// has at most two digits). Other numbers decline the record. The syntax is json::is_json_number's,
// checked again here in the same pass as the magnitude on purpose: this runs on every number
// of every record, and the two passes measured slower.
bool plain_number(const char* p, const char* end) {
  auto digit = [&] { return p < end && static_cast<unsigned char>(*p - '0') < 10; };
  const char* start = p;
  if (p < end && *p == '-') ++p;
  const char* first = p;
  if (!digit()) return false;
  if (*p == '0') ++p;
  else
    while (digit()) ++p;
  if (p == end) return p - first <= 18;
  if (*p == '.') {
    ++p;
    if (!digit()) return false;
    while (digit()) ++p;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    const char* exp = p;
    if (!digit()) return false;
    while (digit()) ++p;
    if (p - exp > 2) return false;
  }
  return p == end && end - start <= 40;
}

}  // namespace

namespace {

// Makes `p` hold at least `need` elements (uninitialized), at the usual size when that is
// enough; false when memory runs out.
template <class T>
bool fit(std::unique_ptr<T[]>& p, std::size_t& capacity, std::size_t need, std::size_t usual) {
  std::size_t want = std::max(need, usual);
  if (capacity >= need && (capacity <= usual || need > usual)) return true;
  p.reset(new (std::nothrow) T[want]);
  capacity = p ? want : 0;
  return p != nullptr;
}

}  // namespace

bool TapeDoc::parse(TapeScratch& s, std::string_view text) {
  // The structural-index layout read here is simdjson 3's (checked on 3.0.1, the Debian 12
  // package); another major version reads every record the ondemand way until it is checked
  // (readers_tape_test then fails on purpose).
  if (simdjson::SIMDJSON_VERSION_MAJOR != 3) return false;
  if (text.empty() || text.size() >= (std::size_t{1} << 28)) return false;  // offsets keep two flag bits
  if (!s.stage1 &&
      simdjson::get_active_implementation()->create_dom_parser_implementation(kUsualRecord, kMaxJsonDepth, s.stage1))
    return false;
  std::size_t cap = s.stage1->capacity();
  if ((cap < text.size() || (cap > kUsualRecord && text.size() <= kUsualRecord)) &&
      s.stage1->set_capacity(std::max(text.size(), kUsualRecord)))
    return false;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  count_parse(ParseCount::stage1);
  if (s.stage1->stage1(bytes, text.size(), simdjson::stage1_mode::regular)) return false;
  return walk(s, *s.stage1, text);
}

namespace {

// simdjson's On-Demand parser keeps its stage 1 (the structural indexes of the document it
// iterates) in a private member, `implementation`; its pointer-to-member is named here through
// an explicit instantiation, where access is not checked ([temp.spec.general]). Its layout is
// simdjson 3's, as the rest of this file's.
using OndemandParser = simdjson::ondemand::parser;
using StageOne = std::unique_ptr<simdjson::internal::dom_parser_implementation>;
StageOne OndemandParser::*stage_one_member();
template <StageOne OndemandParser::*Member>
struct StageOneMember {
  friend StageOne OndemandParser::*stage_one_member() { return Member; }
};
template struct StageOneMember<&OndemandParser::implementation>;

}  // namespace

bool TapeDoc::parse_indexed(TapeScratch& s, const simdjson::ondemand::parser& parser, std::string_view text) {
  if (simdjson::SIMDJSON_VERSION_MAJOR != 3) return false;
  if (text.empty() || text.size() >= (std::size_t{1} << 28)) return false;  // offsets keep two flag bits
  const StageOne& stage1 = parser.*stage_one_member();
  if (!stage1) return false;
  return walk(s, *stage1, text);
}

bool TapeDoc::walk(TapeScratch& s, const simdjson::internal::dom_parser_implementation& stage1, std::string_view text) {
  n_ = stage1.n_structural_indexes;
  if (n_ == 0) return false;
  text_ = text.data();
  idx_ = stage1.structural_indexes.get();
  stage1_ = &stage1;
  // Every string with an escape is decoded into one buffer: its decoded bytes are no more
  // than its source bytes, and each takes a 4-byte length besides (it spans at least four
  // source bytes), so twice the record and the decoder's padding always suffice.
  std::size_t padding = 2 * simdjson::SIMDJSON_PADDING;
  if (!fit(s.decoded, s.decoded_capacity, 2 * text.size() + padding, 2 * kUsualRecord + padding) ||
      !fit(s.aux, s.aux_capacity, std::size_t{n_} + 1, kUsualRecord / 4))
    return false;
  aux_ = s.aux.get();
  decoded_ = s.decoded.get();
  return validate(s, text.size());
}

bool TapeDoc::validate(TapeScratch& s, std::size_t size) {
  const char* const text = text_;
  const std::uint32_t* const idx = idx_;
  // The token count, read once: through `this` it would be loaded again after every store to
  // aux (which the compiler cannot tell apart from n_).
  const std::uint32_t n = n_;
  std::uint32_t* const aux = s.aux.get();
  char* const decoded = s.decoded.get();
  // Strings decoded here take the start of `decoded`; those decoded when first read follow.
  std::size_t& decoded_size = decoded_size_;
  decoded_size = 0;
  const char* const end = text + size;
  // The next backslash of the record: a string before it holds no escape.
  const char* slash = static_cast<const char*>(std::memchr(text, '\\', size));
  if (!s.open) s.open = std::make_unique<TapeScratch::Open[]>(static_cast<std::size_t>(kMaxJsonDepth));
  TapeScratch::Open* const open = s.open.get();
  int depth = 0;  // open[0, depth) are open, the innermost last

  // The string at token k: its escapes checked and decoded through simdjson's own decoder;
  // `*out` its decoded text (keys), `*flags` |= kEscaped when an escape is not canonical.
  auto string = [&](std::uint32_t k, std::string_view* out, std::uint32_t* flags) {
    const char* start = text + idx[k] + 1;
    // The closing quote, found as string_end() finds it, with the blank noted on the way
    // (calling string_end() and comparing measured 5-10% slower reading).
    const char* q = text + idx[k + 1] - 1;
    if (blank(*q)) {
      *flags |= 1;  // a blank before the next token
      do --q;
      while (blank(*q));
    }
    if (*q != '"' || q < start) return false;
    if (!slash || slash >= q) {
      aux[k] = 0;
      if (out) *out = std::string_view(start, static_cast<std::size_t>(q - start));
      return true;
    }
    if (slash < start) return false;  // a backslash outside a string
    // A value whose escapes are all canonical ones (\" \\ \n \r \t \b \f, valid whatever
    // surrounds them) is decoded only if it is read (decode()): most such values are long texts
    // stored as their source wrote them. A member name is decoded now, for the duplicate check,
    // and so is any string with another escape.
    if (!out && json::canonical_string_size(std::string_view(start - 1, static_cast<std::size_t>(q - start) + 2))) {
      aux[k] = kUndecoded;
      slash = static_cast<const char*>(std::memchr(q + 1, '\\', static_cast<std::size_t>(end - (q + 1))));
      return true;
    }
    char* dst = decoded + decoded_size + sizeof(std::uint32_t);
    auto* stop = stage1_->parse_string(reinterpret_cast<const std::uint8_t*>(start), reinterpret_cast<std::uint8_t*>(dst));
    if (!stop) return false;
    auto len = static_cast<std::uint32_t>(reinterpret_cast<char*>(stop) - dst);
    if (len > static_cast<std::size_t>(q - start)) return false;  // the decoder saw another close
    std::memcpy(decoded + decoded_size, &len, sizeof len);
    aux[k] = static_cast<std::uint32_t>(decoded_size) + 1;
    decoded_size += sizeof len + len;
    if (!json::canonical_string_size(std::string_view(start - 1, static_cast<std::size_t>(q - start) + 2))) {
      *flags |= kEscaped;
      aux[k] |= kBlank;
    }
    if (out) *out = std::string_view(dst, len);
    slash = static_cast<const char*>(std::memchr(q + 1, '\\', static_cast<std::size_t>(end - (q + 1))));
    return true;
  };
  auto scalar = [&](std::uint32_t k, std::uint32_t* flags) {
    const char* p = text + idx[k];
    const char* e = text + idx[k + 1];
    if (blank(e[-1])) {
      *flags |= 1;
      do --e;
      while (blank(e[-1]));
    }
    std::string_view tok(p, static_cast<std::size_t>(e - p));
    switch (*p) {
      case 't': return tok == "true";
      case 'f': return tok == "false";
      case 'n': return tok == "null";
      default: return plain_number(p, e);
    }
  };
  // Whether token k follows a one-byte token with a blank between.
  auto spaced = [&](std::uint32_t k) -> std::uint32_t { return idx[k] != idx[k - 1] + 1; };

  std::uint32_t k = 0;
  std::uint32_t flags = 0;  // of the innermost open container
  // The innermost object's member names, two bits each in 64 (a Bloom filter): a name whose
  // bits were all set already may repeat one (kMaybeTwice), and only then are the object's
  // names gathered and compared at its close. Most objects of a trace have a few members, and
  // most close unchecked.
  constexpr std::uint32_t kMaybeTwice = 2;
  std::uint64_t seen = 0;
  char c = text[idx[0]];
  if (c != '{' && c != '[') return false;
  // Each state reads token k; `flags` collects what the innermost open container holds. A
  // blank between two tokens is noted as the second is reached (after a one-byte token) or as
  // the first is checked (after a string, literal or number, whose end is found anyway).
  // Token k < n is checked before it is read: past the last token the indexes point at the
  // padding, whatever bytes it holds.
value:
  if (k >= n) return false;
  c = text[idx[k]];
  if (c == '{' || c == '[') {
    if (depth >= kMaxJsonDepth) return false;
    open[depth++] = {k, flags, seen, c == '{'};
    flags = 0;
    seen = 0;
    ++k;
    flags |= spaced(k);
    if (k < n && text[idx[k]] == (c == '{' ? '}' : ']')) goto close;
    if (c == '{') goto key;
    goto value;
  }
  if (c == '"') {
    if (!string(k, nullptr, &flags)) return false;
  } else if (!scalar(k, &flags)) {
    return false;
  }
  ++k;
  goto after_value;

key: {
  if (k >= n || text[idx[k]] != '"') return false;
  std::string_view name;
  if (!string(k, &name, &flags)) return false;
  const std::uint64_t mixed = fingerprint(name) * kGolden;
  const std::uint64_t bits = (std::uint64_t{1} << (mixed >> 58)) | (std::uint64_t{1} << ((mixed >> 52) & 63));
  if ((seen & bits) == bits) flags |= kMaybeTwice;
  seen |= bits;
  ++k;
  if (k >= n || text[idx[k]] != ':') return false;
  ++k;
  flags |= spaced(k);
  goto value;
}

after_value:
  if (depth == 0) return k == n;
  if (k >= n) return false;
  c = text[idx[k]];
  if (c == ',') {
    ++k;
    flags |= spaced(k);
    if (open[depth - 1].object) goto key;
    goto value;
  }
  if (c != (open[depth - 1].object ? '}' : ']')) return false;

close: {
  // Token k closes the innermost container.
  const TapeScratch::Open o = open[--depth];
  if (o.object && (flags & kMaybeTwice) && !distinct_names(o.token, s)) return false;
  seen = o.seen;
  std::uint32_t mine = (flags & 1 ? kBlank : 0) | (flags & kEscaped);
  aux[o.token] = k | mine;
  flags = o.flags | (flags & 1) | (flags & kEscaped);
  ++k;
  flags |= spaced(k);
  goto after_value;
}
}

std::string_view TapeDoc::decoded_string(std::uint32_t k, std::uint32_t a) const {
  if (a & kUndecoded) a = decode(k);
  std::uint32_t len;
  std::memcpy(&len, decoded_ + (a - 1), sizeof len);
  return std::string_view(decoded_ + (a - 1) + sizeof len, len);
}

std::uint32_t TapeDoc::decode(std::uint32_t k) const {
  // Through simdjson's decoder, as validate() decodes the others; its escapes were checked there.
  char* const dst = decoded_ + decoded_size_ + sizeof(std::uint32_t);
  auto* stop = stage1_->parse_string(reinterpret_cast<const std::uint8_t*>(text_ + idx_[k] + 1),
                                     reinterpret_cast<std::uint8_t*>(dst));
  const auto len = static_cast<std::uint32_t>(reinterpret_cast<char*>(stop) - dst);
  std::memcpy(decoded_ + decoded_size_, &len, sizeof len);
  const auto a = static_cast<std::uint32_t>(decoded_size_) + 1;
  aux_[k] = a;
  decoded_size_ += sizeof len + len;
  return a;
}

bool TapeDoc::distinct_names(std::uint32_t k, TapeScratch& s) const {
  s.names.clear();
  for_keys(k, [&](std::string_view name) {
    s.names.push_back({fingerprint(name), name});
    return true;
  });
  return all_distinct(s.names.data(), s.names.data() + s.names.size(), s.name_slots);
}

std::string_view checked_tape_member(const TapeValue& v) {
  const TapeDoc& d = *v.doc();
  const std::uint32_t k = v.token_index();
  if (k < 2 || d.at(k - 1) != ':') return {};
  const std::uint32_t name = k - 2;  // a colon follows a member name
  const std::size_t name_size = d.canonical_string_size(name);
  if (name_size == 0 || d.pos(name) + name_size != d.pos(k - 1) || d.pos(k - 1) + 1 != d.pos(k)) return {};
  const char* end;
  switch (d.at(k)) {
    case '"': {
      std::size_t size = d.canonical_string_size(k);
      if (size == 0) return {};
      end = d.pos(k) + size;
      break;
    }
    case '{': case '[':
      if (!d.canonical(k)) return {};
      end = d.pos(d.close_of(k)) + 1;
      break;
    default:  // a number keeps its source text; or true/false/null
      end = d.pos(k) + trim_ws(d.token(k)).size();
  }
  return std::string_view(d.pos(name), static_cast<std::size_t>(end - d.pos(name)));
}

namespace {

// One string token, as write_value writes it: its source text when canonical, else decoded
// and escaped again.
void write_string(const TapeDoc& d, std::uint32_t k, std::string& out) {
  if (std::size_t size = d.canonical_string_size(k)) {
    out.append(d.pos(k), size);
    return;
  }
  append_json_string(out, d.string_at(k));
}

}  // namespace

void write_tape_value(const TapeValue& v, std::string& out) {
  const TapeDoc& d = *v.doc();
  std::uint32_t k = v.token_index();
  char c = d.at(k);
  if (c == '"') return write_string(d, k, out);
  if (c != '{' && c != '[') {
    out.append(trim_ws(d.token(k)));  // a number keeps its source text; or true/false/null
    return;
  }
  std::uint32_t close = d.close_of(k);
  if (d.canonical(k)) {
    out.append(d.pos(k), static_cast<std::size_t>(d.pos(close) - d.pos(k)) + 1);
    return;
  }
  // Token by token: blanks dropped, strings with other escapes rewritten.
  for (std::uint32_t j = k; j <= close; ++j) {
    c = d.at(j);
    switch (c) {
      case '{': case '[': case '}': case ']': case ',': case ':':
        out.push_back(c);
        break;
      case '"':
        write_string(d, j, out);
        break;
      default:
        out.append(trim_ws(d.token(j)));
    }
  }
}

}  // namespace trajcheck::detail
