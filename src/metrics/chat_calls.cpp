// Tool calls of a score record's side read in place from its On-Demand document, with the
// acceptance rules of the chat reader (readers/chat_reader.cpp) and TraceParser; every case
// this file does not reproduce exactly is handed back to them (return false).
#include "metrics/chat_calls.hpp"

#include <algorithm>
#include <cstring>

#include "readers/chat_roles.hpp"
#include "json/ondemand.hpp"
#include "trajcheck/record_shape.hpp"

namespace trajcheck::metrics {

namespace od = simdjson::ondemand;
using json::canonical_string_size;
using json::for_members;
using json::is_json_number;
using json::number_token;
using json::plain_string_token;
using json::trim_ws;
using json::unescaped_length;

namespace {

// Deeper values are left to the general reader (its own limit is kMaxJsonDepth).
constexpr int kMaxDepth = 64;

// Accepts exactly what detail::write_value accepts (and possibly less), writing nothing.
bool validate(od::value v, int depth) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      if (depth >= kMaxDepth) return false;
      od::object o;
      if (v.get_object().get(o)) return false;
      return for_members(o, [&](std::string_view, bool, od::value mv) { return validate(mv, depth + 1); });
    }
    case od::json_type::array: {
      if (depth >= kMaxDepth) return false;
      od::array a;
      if (v.get_array().get(a)) return false;
      for (auto element : a) {
        od::value ev;
        if (element.get(ev)) return false;
        if (!validate(ev, depth + 1)) return false;
      }
      return true;
    }
    case od::json_type::string: {
      std::string_view s;
      if (plain_string_token(v, &s)) return true;
      return !v.get_string().get(s);
    }
    case od::json_type::number: {
      std::string_view text;
      return number_token(v, &text);
    }
    case od::json_type::boolean: {
      bool b;
      return !v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool is_null = false;
      return !v.is_null().get(is_null) && is_null;
    }
  }
  return false;
}

// A string's decoded text: its source bytes when it needs no decoding (no copy), else
// simdjson's unescaped copy. The caller has checked that `v` is a string.
bool string_text(od::value& v, std::string_view* out) {
  // Peek first: a canonical string with escapes must still be decoded by get_string.
  std::string_view raw = v.raw_json_token();
  std::size_t len = unescaped_length(raw.data() + 1);
  if (len != std::string_view::npos) {
    simdjson::ondemand::raw_json_string consumed;
    if (v.get_raw_json_string().get(consumed)) return false;
    *out = raw.substr(1, len);
    return true;
  }
  return !v.get_string().get(*out);
}

bool get_string(od::value v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type) || type != od::json_type::string) return false;
  return string_text(v, out);
}

// ParseCtx::get_id: a string (decoded) or a number (its text); false for anything else.
bool get_id(od::value v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::string) return string_text(v, out);
  if (type == od::json_type::number) {
    return number_token(v, out);
  }
  return false;
}

bool is_null(od::value v, bool* null) {
  od::json_type type;
  if (v.type().get(type)) return false;
  *null = false;
  if (type != od::json_type::null) return true;
  return !v.is_null().get(*null) && *null;
}

using Role = detail::ChatRole;

// A hash for the short texts hashed per call (names, ids, argument texts), eight bytes at a
// time; only ever compared with itself (the open-addressing tables of this file).
std::size_t hash_text(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (s.size() * 0xff51afd7ed558ccdull);
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  if (n > 0) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  }
  h ^= h >> 33;  // the tables use the low bits
  h *= 0xff51afd7ed558ccdull;
  return static_cast<std::size_t>(h ^ (h >> 33));
}

std::size_t hash_id(std::string_view s) { return hash_text(s); }

}  // namespace

ChatCallReader::ChatCallReader(const NormalizeOptions& options) {
  enabled_ = options.format == InputFormat::auto_detect || options.format == InputFormat::openai;
  case_sensitive_ = options.case_sensitive;
  reads_errors_ = options.error_patterns.empty();
  for (const auto& [observed, canonical] : options.aliases)
    aliases_[normalize_tool_name(observed, case_sensitive_)] = normalize_tool_name(canonical, case_sensitive_);
}

void ChatCallReader::begin_record(ArgCanon& canon, std::string_view source) {
  canon.clear();
  source_ = source;
  decoded_.clear();
  // The memo's keys and values point into this record and this arena.
  if (!memo_.empty()) {
    memo_.clear();
    std::fill(memo_slots_.begin(), memo_slots_.end(), 0);
  }
  // Interned names are kept between records; a pathological input with ever new names
  // must not grow memory without bound.
  if (names_.size() > (1u << 16)) {
    names_.clear();
    slots_.clear();
  }
}

void ChatCallReader::release_scratch() {
  std::vector<OpenCall>().swap(open_);
  std::vector<std::uint32_t>().swap(table_);
  indexed_ = 0;
  std::vector<Pending>().swap(pending_);
  std::vector<Memo>().swap(memo_);
  std::vector<std::uint32_t>().swap(memo_slots_);
  std::deque<std::string>().swap(decoded_);
}

std::string_view ChatCallReader::keep(std::string_view s) {
  if (source_.empty() || s.empty() ||
      (s.data() >= source_.data() && s.data() + s.size() <= source_.data() + source_.size()))
    return s;
  return decoded_.emplace_back(s);
}

std::string_view ChatCallReader::intern(std::string_view raw) {
  // ParseCtx::set_tool: trim, fold ASCII case, apply aliases.
  auto space = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; };
  while (!raw.empty() && space(raw.front())) raw.remove_prefix(1);
  while (!raw.empty() && space(raw.back())) raw.remove_suffix(1);
  std::string_view name = raw;
  if (!case_sensitive_ && std::any_of(raw.begin(), raw.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; })) {
    fold_.assign(raw);
    for (char& ch : fold_)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    name = fold_;
  }
  if (!aliases_.empty()) {
    auto it = aliases_.find(name);
    if (it != aliases_.end()) name = it->second;
  }
  // Open addressing over the stored names (a deque: its strings never move).
  if (2 * (names_.size() + 1) > slots_.size()) {
    slots_.assign(std::max<std::size_t>(256, slots_.size() * 2), 0);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      std::size_t h = hash_text(names_[i]) & mask;
      while (slots_[h] != 0) h = (h + 1) & mask;
      slots_[h] = static_cast<std::uint32_t>(i + 1);
    }
  }
  std::size_t mask = slots_.size() - 1;
  for (std::size_t h = hash_text(name) & mask;; h = (h + 1) & mask) {
    std::uint32_t s = slots_[h];
    if (s == 0) {
      names_.emplace_back(name);
      slots_[h] = static_cast<std::uint32_t>(names_.size());
      return names_.back();
    }
    if (names_[s - 1] == name) return names_[s - 1];
  }
}

const CanonArgs* ChatCallReader::find_memo(std::string_view raw, std::size_t hash) const {
  if (memo_slots_.empty()) return nullptr;
  std::size_t mask = memo_slots_.size() - 1;
  for (std::size_t h = hash & mask;; h = (h + 1) & mask) {
    std::uint32_t s = memo_slots_[h];
    if (s == 0) return nullptr;
    if (memo_[s - 1].raw == raw) return &memo_[s - 1].args;
  }
}

void ChatCallReader::add_memo(std::string_view raw, std::size_t hash, const CanonArgs& args) {
  memo_.push_back({raw, args});
  if (memo_slots_.size() < 2 * memo_.size()) {
    memo_slots_.assign(std::max<std::size_t>(64, memo_slots_.size() * 2), 0);
    std::size_t mask = memo_slots_.size() - 1;
    for (std::size_t i = 0; i < memo_.size(); ++i) {
      std::size_t h = hash_text(memo_[i].raw) & mask;
      while (memo_slots_[h] != 0) h = (h + 1) & mask;
      memo_slots_[h] = static_cast<std::uint32_t>(i + 1);
    }
    return;
  }
  std::size_t mask = memo_slots_.size() - 1, h = hash & mask;
  while (memo_slots_[h] != 0) h = (h + 1) & mask;
  memo_slots_[h] = static_cast<std::uint32_t>(memo_.size());
}

// Open addressing over call ids: each slot holds the latest call with that id, and calls
// chain to the previous call with the same id, so joining a result costs O(1) whatever the
// distance to its call (the chat reader's backward scan is quadratic in the worst case).
void ChatCallReader::index_call(std::uint32_t k) {
  if (table_.size() < 2 * (open_.size() + 1)) {
    std::size_t n = 16;
    while (n < 4 * (open_.size() + 1)) n *= 2;
    table_.assign(n, 0);
    for (std::uint32_t i = 0; i < k; ++i) {
      // Re-insert: only the latest call of each id occupies a slot.
      std::string_view id = open_[i].id;
      if (id.empty()) continue;
      std::size_t mask = table_.size() - 1, h = hash_id(id) & mask;
      for (;; h = (h + 1) & mask) {
        std::uint32_t s = table_[h];
        if (s == 0) {
          table_[h] = i + 1;
          break;
        }
        const OpenCall& o = open_[s - 1];
        if (o.id == id) {
          table_[h] = i + 1;
          break;
        }
      }
    }
  }
  OpenCall& c = open_[k];
  std::string_view id = c.id;
  if (id.empty()) return;
  std::size_t mask = table_.size() - 1, h = hash_id(id) & mask;
  for (;; h = (h + 1) & mask) {
    std::uint32_t s = table_[h];
    if (s == 0) {
      table_[h] = k + 1;
      return;
    }
    const OpenCall& o = open_[s - 1];
    if (o.id == id) {
      c.prev_same_id = s;
      table_[h] = k + 1;
      return;
    }
  }
}

std::uint32_t ChatCallReader::find_open(std::string_view id) {
  // Results mostly follow their calls closely: the latest calls are looked at first, newest
  // first, so the first open one with this id is the latest open one (as the index finds).
  // Only when none of them has it are the calls indexed (from where the index stopped).
  constexpr std::size_t kRecent = 16;
  const std::size_t n = open_.size();
  for (std::size_t k = n; k > 0 && k + kRecent > n; --k)
    if (open_[k - 1].open && open_[k - 1].id == id) return static_cast<std::uint32_t>(k);
  if (n <= kRecent) return 0;  // every call was looked at
  for (; indexed_ < n; ++indexed_) index_call(indexed_);
  if (table_.empty()) return 0;
  std::size_t mask = table_.size() - 1, h = hash_id(id) & mask;
  for (;; h = (h + 1) & mask) {
    std::uint32_t s = table_[h];
    if (s == 0) return 0;
    const OpenCall& o = open_[s - 1];
    if (o.id != id) continue;
    for (; s != 0; s = open_[s - 1].prev_same_id)
      if (open_[s - 1].open) return s;
    return 0;
  }
}

void ChatCallReader::begin_side(const std::vector<Call>& calls) {
  open_.clear();
  if (indexed_ > 0) std::fill(table_.begin(), table_.end(), 0);
  indexed_ = 0;
  first_call_ = static_cast<std::uint32_t>(calls.size());
}

bool ChatCallReader::read_side(od::value side, ArgCanon& canon, std::vector<Call>& calls,
                               std::vector<CanonArgs>& args) {
  if (!enabled_) return false;
  begin_side(calls);
  od::json_type type;
  if (side.type().get(type)) return false;
  if (type == od::json_type::array) {
    od::array a;
    if (side.get_array().get(a)) return false;
    return read_messages(a, canon, calls, args);
  }
  if (type != od::json_type::object || enabled_ == false) return false;
  // {"messages": [...], …}: TraceParser's shape detection (trajcheck/record_shape.hpp) picks
  // chat when there is a "messages" or "traj" name and no "steps" or "epoch" (an Inspect
  // sample); every other member must be valid JSON.
  namespace shape = shape_key_bits;
  od::object o;
  if (side.get_object().get(o)) return false;
  bool has_messages = false;
  return for_members(o, [&](std::string_view key, bool, od::value v) {
           ShapeKeys bit = shape_key(key);
           if (bit & (shape::steps | shape::resource_spans | shape::epoch | shape::contents)) return false;
           if (bit & shape::messages) {
             if (has_messages) return false;
             has_messages = true;
             od::array a;
             return !v.get_array().get(a) && read_messages(a, canon, calls, args);
           }
           return validate(v, 1);
         }) &&
         has_messages;
}

bool ChatCallReader::read_messages(od::array messages, ArgCanon& canon, std::vector<Call>& calls,
                                   std::vector<CanonArgs>& args) {
  std::uint32_t index = 0;
  for (auto element : messages) {
    od::value mv;
    if (element.get(mv)) return false;
    if (!read_message(mv, index, index == 0, canon, calls, args)) return false;
    ++index;
  }
  return end_side(index);
}

bool ChatCallReader::read_message(od::value mv, std::uint32_t index, bool first, ArgCanon& canon,
                                  std::vector<Call>& calls, std::vector<CanonArgs>& args) {
  od::object m;
  if (mv.get_object().get(m)) return false;
  pending_.clear();
  std::string_view role_name, result_name;
  std::string_view result_id;
  bool has_role = false, bad_tool_field = false, has_name = false;
  // A tool message's verdict on its call: `is_error` is read here; "status" and "error" (words
  // and values of other formats) are left to the chat reader.
  bool is_error = false, other_error_field = false;
  const bool members_ok = for_members(m, [&](std::string_view key, bool, od::value v) {
    if (key == "role") {
      if (has_role || !get_string(v, &role_name)) return false;
      has_role = true;
      // TraceParser takes a first element with a message list for something else.
    } else if (first && (shape_key(key) & shape_key_bits::message_list)) {
      return false;
    } else if (key == "content") {
      od::json_type type;
      if (v.type().get(type)) return false;
      if (type == od::json_type::string) {
        // Message text is only validated. Stage 1 has checked its UTF-8 and control
        // characters, so what is left are its escapes: when all are ones the canonical scan
        // accepts (\" \\ \n \r \t \b \f), the text is valid without being decoded.
        if (canonical_string_size(v.raw_json_token())) {
          simdjson::ondemand::raw_json_string consumed;
          if (v.get_raw_json_string().get(consumed)) return false;
        } else {
          std::string_view text;
          if (v.get_string().get(text)) return false;
        }
      } else if (type == od::json_type::null) {
        bool null = false;
        if (!is_null(v, &null) || !null) return false;
      } else {
        return false;  // content blocks (Anthropic) or a wrong type: the chat reader decides
      }
    } else if (key == "tool_calls") {
      bool null = false;
      if (!is_null(v, &null)) return false;
      if (null) return true;
      od::array a;
      if (v.get_array().get(a)) return false;
      for (auto element : a) {
        od::value cv;
        if (element.get(cv)) return false;
        if (!read_call(cv, canon)) return false;
      }
    } else if (key == "function_call" || key == "parts" || key == "tool_call" || key == "function") {
      // A legacy call, Gemini parts, AgentDojo's copy of the call, Inspect's tool name.
      return false;
    } else if (key == "tool_call_id") {
      // Read as an id only by role "tool" messages, as an extra field otherwise; the role
      // may come later, so both readings must hold.
      od::json_type type;
      if (v.type().get(type)) return false;
      if (type == od::json_type::string || type == od::json_type::number) {
        std::string_view id;
        if (!get_id(v, &id)) return false;
        result_id = id;  // last one wins, as in the chat reader
      } else {
        if (!validate(v, 1)) return false;
        bad_tool_field = true;
      }
    } else if (key == "name") {
      od::json_type type;
      if (v.type().get(type)) return false;
      if (type == od::json_type::string) {
        if (!string_text(v, &result_name)) return false;
        has_name = true;
      } else {
        if (!validate(v, 1)) return false;
        bad_tool_field = true;
      }
    } else if (key == "is_error") {
      od::json_type type;
      if (v.type().get(type)) return false;
      if (type == od::json_type::boolean) {
        bool b;
        if (v.get_bool().get(b)) return false;
        is_error |= b;
      } else {
        if (!validate(v, 1)) return false;
        bad_tool_field = true;
      }
    } else {
      if (key == "status" || key == "error") other_error_field = true;
      if (!validate(v, 1)) return false;
    }
    return true;
  });
  if (!members_ok || !has_role || role_name.empty()) return false;
  Role role = detail::classify_chat_role(role_name);
  if (role == Role::system) return true;
  if (role == Role::other) return false;  // the chat reader warns about it
  if (role == Role::tool) {
    if (bad_tool_field || other_error_field) return false;
    // As the chat reader joins results (chat_reader.cpp, CallIndex): the latest open call
    // with this id; without an id, the first open call with this raw name (any open call
    // when no name is given).
    std::uint32_t found = 0;
    if (!result_id.empty()) {
      found = find_open(result_id);
    } else {
      for (std::uint32_t k = 0; k < open_.size() && !found; ++k) {
        const OpenCall& o = open_[k];
        if (o.open && (!has_name || result_name.empty() ||
                       o.raw == result_name))
          found = k + 1;
      }
    }
    if (!found) return false;  // the reader keeps it as a call of its own, with a warning
    open_[found - 1].open = false;
    calls[first_call_ + found - 1].failed = is_error;
    return true;
  }
  for (const Pending& p : pending_) {
    Call c;
    c.name = p.name;
    c.turn = index;
    c.has_args = p.has_args;
    calls.push_back(c);
    args.push_back(p.args);
    OpenCall o;
    o.id = p.id;
    o.raw = p.raw;
    open_.push_back(o);
  }
  return true;
}

bool ChatCallReader::read_call(od::value cv, ArgCanon& canon) {
  od::object o;
  if (cv.get_object().get(o)) return false;
  Pending p;
  bool has_id = false, has_function = false, has_name = false, args_text = false, args_value = false;
  bool args_memo = false;
  std::string_view text, args_raw;
  std::size_t args_hash = 0;
  const bool members_ok = for_members(o, [&](std::string_view key, bool, od::value v) {
    if (key == "id") {
      std::string_view id;
      if (has_id || !get_id(v, &id)) return false;
      has_id = true;
      p.id = keep(id);
    } else if (key == "type") {
      std::string_view type;
      if (!get_string(v, &type)) return false;
    } else if (key == "function") {
      od::object fo;
      if (has_function || v.get_object().get(fo)) return false;
      has_function = true;
      return for_members(fo, [&](std::string_view fkey, bool, od::value fv) {
        if (fkey == "name") {
          std::string_view raw;
          if (has_name || !get_string(fv, &raw)) return false;
          has_name = true;
          p.raw = keep(raw);
          p.name = intern(raw);
        } else if (fkey == "arguments") {
          if (args_text || args_value) return false;
          od::json_type type;
          if (fv.type().get(type)) return false;
          if (type == od::json_type::string) {
            args_raw = fv.raw_json_token();
            args_hash = hash_text(args_raw);
            args_text = true;
            if (const CanonArgs* seen = find_memo(args_raw, args_hash)) {
              // The same bytes decoded and parsed before: consume the value, take the result.
              simdjson::ondemand::raw_json_string consumed;
              if (fv.get_raw_json_string().get(consumed)) return false;
              p.args = *seen;
              args_memo = true;
            } else if (fv.get_string().get(text)) {
              return false;
            }
          } else if (type == od::json_type::object) {
            od::object ao;
            if (fv.get_object().get(ao) || !canon.add_object(ao, &p.args)) return false;
            args_value = true;
          } else {
            return false;
          }
        } else if (!validate(fv, 2)) {
          return false;
        }
        return true;
      });
    } else if (key == "name" || key == "args" || key == "arguments") {
      return false;  // a name and arguments beside "function" (LangChain, AgentDojo)
    } else {
      bool null = false;
      if (!is_null(v, &null)) return false;
      if (!null && !validate(v, 1)) return false;
    }
    return true;
  });
  if (!members_ok || !has_name) return false;
  p.has_args = args_text || args_value;
  if (args_text) {
    if (!args_memo) {
      // ParseCtx::set_arguments_text: blank text is {}; other text must be a JSON object here.
      std::string_view trimmed = trim_ws(text);
      if (!canon.add_object_text(trimmed, inner_, padded_, &p.args)) return false;
      add_memo(args_raw, args_hash, p.args);
    }
  } else if (!args_value) {
    p.args = canon.add({});
  }
  pending_.push_back(p);
  return true;
}

}  // namespace trajcheck::metrics
