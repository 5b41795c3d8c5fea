// Deterministic generator of the benchmark data (bench/run.sh): native JSONL traces, agentevals
// score records, long single traces and rule files for the scaling runs. The same seed gives the
// same bytes on every platform (own PRNG and integer arithmetic; no <random> distributions).
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

// ---------------------------------------------------------------- randomness

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (both inclusive); the modulo bias is irrelevant here.
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool chance(int per_mille) { return static_cast<int>(next() % 1000) < per_mille; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[next() % v.size()]; }

 private:
  std::uint64_t s_;
};

// ---------------------------------------------------------------- a small JSON writer

// Appends JSON to a string, inserting commas itself; strings are escaped.
class Json {
 public:
  std::string out;

  void begin_object() { value_prefix(); out += '{'; first_.push_back(true); }
  void end_object() { out += '}'; first_.pop_back(); }
  void begin_array() { value_prefix(); out += '['; first_.push_back(true); }
  void end_array() { out += ']'; first_.pop_back(); }
  void key(std::string_view k) {
    comma();
    append_string(k);
    out += ':';
    after_key_ = true;
  }
  void string(std::string_view s) { value_prefix(); append_string(s); }
  void integer(std::int64_t v) {
    value_prefix();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRId64, v);
    out += buf;
  }
  void money(std::int64_t cents) {  // fixed two decimals: deterministic, no float formatting
    value_prefix();
    char buf[40];
    std::snprintf(buf, sizeof buf, "%" PRId64 ".%02d", cents / 100, static_cast<int>(cents % 100));
    out += buf;
  }
  void boolean(bool b) { value_prefix(); out += b ? "true" : "false"; }
  void null() { value_prefix(); out += "null"; }
  void raw(std::string_view json) { value_prefix(); out += json; }

  // Shorthands for "key": value.
  void kv(std::string_view k, std::string_view v) { key(k); string(v); }
  void kv(std::string_view k, const char* v) { key(k); string(v); }
  void kv(std::string_view k, std::int64_t v) { key(k); integer(v); }
  void kv(std::string_view k, int v) { key(k); integer(v); }
  void kv(std::string_view k, bool v) { key(k); boolean(v); }

  void clear() { out.clear(); first_.clear(); after_key_ = false; }

 private:
  void comma() {
    if (!first_.empty()) {
      if (!first_.back()) out += ',';
      first_.back() = false;
    }
  }
  void value_prefix() {
    if (after_key_) { after_key_ = false; return; }
    comma();
  }
  void append_string(std::string_view s) {
    out += '"';
    for (char c : s) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += c;
          }
      }
    }
    out += '"';
  }
  std::vector<bool> first_;
  bool after_key_ = false;
};

// ---------------------------------------------------------------- the tool vocabulary

// How a tool's arguments and results look.
enum class Kind { customer, order, order_items, address, refund, payment, product, cart, ticket,
                  message, search, fetch, text, db, file, plain };

struct Tool {
  const char* name;
  Kind kind;
  int weight;          // how often an agent picks it
  bool needs_approval; // state-changing: usually preceded by approval_request + approval
  bool text_result;    // returns long free text (search, fetch, summarize…)
};

// 50 tools of a retail / support agent with a few generic ones, as rules files name them.
const std::vector<Tool> kTools = {
    {"customer_get", Kind::customer, 60, false, false},
    {"customer_search", Kind::customer, 25, false, false},
    {"customer_update", Kind::customer, 8, true, false},
    {"order_get", Kind::order, 80, false, false},
    {"order_list", Kind::customer, 35, false, false},
    {"order_search_by_email", Kind::customer, 25, false, false},
    {"order_cancel", Kind::order, 10, true, false},
    {"order_modify_address", Kind::address, 8, true, false},
    {"order_modify_items", Kind::order_items, 8, true, false},
    {"order_return_items", Kind::order_items, 8, true, false},
    {"refund_order", Kind::refund, 14, true, false},
    {"refund_status", Kind::order, 10, false, false},
    {"payment_get", Kind::payment, 15, false, false},
    {"payment_method_list", Kind::customer, 12, false, false},
    {"payment_charge", Kind::payment, 5, true, false},
    {"shipment_track", Kind::order, 25, false, false},
    {"shipment_create", Kind::address, 5, true, false},
    {"inventory_check", Kind::product, 15, false, false},
    {"product_get", Kind::product, 30, false, false},
    {"product_search", Kind::search, 20, false, true},
    {"product_list_variants", Kind::product, 12, false, false},
    {"cart_get", Kind::cart, 10, false, false},
    {"cart_add_item", Kind::cart, 8, false, false},
    {"cart_remove_item", Kind::cart, 5, false, false},
    {"coupon_validate", Kind::plain, 6, false, false},
    {"coupon_apply", Kind::cart, 4, false, false},
    {"ticket_create", Kind::ticket, 10, false, false},
    {"ticket_get", Kind::ticket, 10, false, false},
    {"ticket_update", Kind::ticket, 8, false, false},
    {"ticket_close", Kind::ticket, 6, false, false},
    {"email_send", Kind::message, 10, false, false},
    {"sms_send", Kind::message, 4, false, false},
    {"kb_search", Kind::search, 30, false, true},
    {"search_documents", Kind::search, 25, false, true},
    {"web_fetch", Kind::fetch, 12, false, true},
    {"http_request", Kind::fetch, 6, false, true},
    {"calculate", Kind::plain, 12, false, false},
    {"translate_text", Kind::text, 4, false, true},
    {"summarize_text", Kind::text, 6, false, true},
    {"db_query", Kind::db, 10, false, true},
    {"db_write", Kind::db, 5, true, false},
    {"file_read", Kind::file, 5, false, true},
    {"file_write", Kind::file, 3, false, false},
    {"delete_record", Kind::db, 1, true, false},
    {"delete_file", Kind::file, 1, false, false},
    {"transfer_to_human_agents", Kind::plain, 4, false, false},
    {"think", Kind::text, 20, false, false},
    {"login", Kind::plain, 0, false, false},   // placed by the trace shape, not drawn
    {"logout", Kind::plain, 0, false, false},
    {"audit_log_write", Kind::plain, 6, false, false},
};

const std::vector<std::string> kWords = {
    "order", "refund", "the", "customer", "asked", "about", "a", "delayed", "package", "and",
    "wants", "to", "change", "address", "shipping", "policy", "says", "items", "may", "be",
    "returned", "within", "thirty", "days", "of", "delivery", "if", "unused", "in", "original",
    "condition", "payment", "card", "gift", "balance", "was", "charged", "twice", "for", "same",
    "product", "variant", "color", "size", "blue", "large", "small", "red", "inventory", "shows",
    "available", "warehouse", "tracking", "number", "carrier", "exchange", "store", "credit",
    "please", "confirm", "your", "email", "account", "verified", "identity", "cannot", "help",
    "with", "that", "request", "transfer", "human", "agent", "ticket", "opened", "priority",
    "high", "low", "note", "invoice", "discount", "coupon", "expired", "valid", "until", "end",
    "month", "shipment", "lost", "damaged", "photo", "attached", "résumé", "naïve", "café"};

const std::vector<std::string> kCities = {"Lyon", "Berlin", "Austin", "Osaka", "Porto", "Denver",
                                          "Leeds", "Turin", "Quebec", "Perth"};
const std::vector<std::string> kColors = {"black", "white", "blue", "red", "green"};
const std::vector<std::string> kSizes = {"S", "M", "L", "XL"};
const std::vector<std::string> kTenants = {"acme", "globex", "initech", "umbrella"};
const std::vector<std::string> kChannels = {"web", "email", "phone", "chat"};
const std::vector<std::string> kReasons = {"damaged", "late", "wrong_item", "not_needed",
                                           "duplicate_charge"};
const std::vector<std::string> kErrors = {
    "Error: order not found", "Error: payment declined", "Error: timeout after 30s",
    "Error: rate limit exceeded", "Error: permission denied", "Error: invalid address"};

std::string ident(Rng& r, const char* prefix, int digits = 6) {
  static const char alphabet[] = "abcdefghijkmnpqrstuvwxyz0123456789";
  std::string s = prefix;
  for (int i = 0; i < digits; ++i) s += alphabet[r.next() % (sizeof alphabet - 1)];
  return s;
}

std::string sentence(Rng& r, int min_words, int max_words) {
  std::string s;
  int n = static_cast<int>(r.range(min_words, max_words));
  for (int i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += r.pick(kWords);
  }
  s += '.';
  if (!s.empty()) s[0] = static_cast<char>(s[0] >= 'a' && s[0] <= 'z' ? s[0] - 32 : s[0]);
  return s;
}

// 1–4 KB of paragraphs (with newlines, so parsers meet escapes).
std::string long_text(Rng& r) {
  std::string s;
  std::size_t target = static_cast<std::size_t>(r.range(1024, 4096));
  while (s.size() < target) {
    s += sentence(r, 6, 18);
    s += r.chance(200) ? "\n\n" : " ";
  }
  return s;
}

// Per-trace entities, so that ids repeat within a trace as they do in real conversations.
struct Entities {
  std::vector<std::string> customers, orders, items, payments, tickets;
  std::string email;
  void make(Rng& r) {
    customers = {ident(r, "cus_"), ident(r, "cus_")};
    orders.clear();
    for (int i = 0, n = static_cast<int>(r.range(1, 4)); i < n; ++i) orders.push_back(ident(r, "ord_"));
    items.clear();
    for (int i = 0, n = static_cast<int>(r.range(2, 6)); i < n; ++i) items.push_back(ident(r, "itm_", 8));
    payments = {ident(r, "pm_"), ident(r, "gift_card_")};
    tickets = {ident(r, "tkt_", 5)};
    email = ident(r, "", 7) + "@example.com";
  }
};

void write_address(Json& j, Rng& r) {
  j.begin_object();
  j.kv("line1", std::to_string(r.range(1, 999)) + " " + r.pick(kWords) + " street");
  j.kv("city", r.pick(kCities));
  j.kv("zip", std::to_string(r.range(10000, 99999)));
  j.kv("country", r.chance(700) ? "US" : "FR");
  j.end_object();
}

void write_items(Json& j, Rng& r, const Entities& e) {
  j.begin_array();
  for (int i = 0, n = static_cast<int>(r.range(1, 3)); i < n; ++i) {
    j.begin_object();
    j.kv("item_id", r.pick(e.items));
    j.kv("quantity", r.range(1, 3));
    j.key("options");
    j.begin_object();
    j.kv("color", r.pick(kColors));
    j.kv("size", r.pick(kSizes));
    j.end_object();
    j.end_object();
  }
  j.end_array();
}

void write_arguments(Json& j, Rng& r, const Tool& t, const Entities& e) {
  j.begin_object();
  switch (t.kind) {
    case Kind::customer:
      if (r.chance(600)) j.kv("customer_id", r.pick(e.customers));
      else j.kv("email", e.email);
      break;
    case Kind::order: j.kv("order_id", r.pick(e.orders)); break;
    case Kind::order_items:
      j.kv("order_id", r.pick(e.orders));
      j.key("items");
      write_items(j, r, e);
      j.kv("payment_method_id", r.pick(e.payments));
      break;
    case Kind::address:
      j.kv("order_id", r.pick(e.orders));
      j.key("address");
      write_address(j, r);
      break;
    case Kind::refund:
      j.kv("order_id", r.pick(e.orders));
      j.key("amount");
      j.money(r.range(199, 250000));
      j.kv("reason", r.pick(kReasons));
      j.kv("payment_method_id", r.pick(e.payments));
      break;
    case Kind::payment:
      j.kv("payment_method_id", r.pick(e.payments));
      j.key("amount");
      j.money(r.range(100, 90000));
      j.kv("currency", r.chance(800) ? "USD" : "EUR");
      break;
    case Kind::product:
      j.kv("product_id", ident(r, "prd_", 5));
      if (r.chance(500)) {
        j.key("filters");
        j.begin_object();
        j.kv("color", r.pick(kColors));
        j.kv("in_stock", r.chance(700));
        j.end_object();
      }
      break;
    case Kind::cart:
      j.kv("customer_id", e.customers[0]);
      j.kv("item_id", r.pick(e.items));
      j.kv("quantity", r.range(1, 4));
      break;
    case Kind::ticket:
      j.kv("ticket_id", e.tickets[0]);
      j.kv("priority", r.chance(300) ? "high" : "normal");
      j.key("tags");
      j.begin_array();
      j.string(r.pick(kReasons));
      if (r.chance(500)) j.string(r.pick(kChannels));
      j.end_array();
      break;
    case Kind::message:
      j.kv("to", e.email);
      j.kv("subject", sentence(r, 3, 6));
      j.kv("body", sentence(r, 10, 30));
      break;
    case Kind::search:
      j.kv("query", sentence(r, 2, 6));
      j.kv("top_k", r.range(3, 10));
      j.key("filters");
      j.begin_object();
      j.kv("lang", r.chance(800) ? "en" : "fr");
      j.kv("since", "2025-0" + std::to_string(r.range(1, 9)) + "-01");
      j.end_object();
      break;
    case Kind::fetch:
      j.kv("url", "https://docs.example.com/" + r.pick(kWords) + "/" + ident(r, "", 4));
      j.kv("method", r.chance(850) ? "GET" : "POST");
      j.key("headers");
      j.begin_object();
      j.kv("accept", "application/json");
      j.end_object();
      break;
    case Kind::text: j.kv("text", sentence(r, 8, 24)); break;
    case Kind::db:
      j.kv("table", r.chance(500) ? "orders" : "customers");
      j.key("where");
      j.begin_object();
      j.kv("id", r.pick(e.orders));
      j.end_object();
      if (t.needs_approval) {
        j.key("values");
        j.begin_object();
        j.kv("status", "updated");
        j.kv("version", r.range(1, 9));
        j.end_object();
      }
      break;
    case Kind::file: j.kv("path", "/srv/data/" + r.pick(kWords) + "/" + ident(r, "", 5) + ".txt"); break;
    case Kind::plain:
      if (r.chance(600)) j.kv("reason", sentence(r, 3, 8));
      break;
  }
  j.end_object();
}

void write_result(Json& j, Rng& r, const Tool& t, const Entities& e) {
  j.begin_object();
  j.kv("status", "ok");
  switch (t.kind) {
    case Kind::customer:
      j.key("customer");
      j.begin_object();
      j.kv("id", e.customers[0]);
      j.kv("email", e.email);
      j.key("orders");
      j.begin_array();
      for (const auto& o : e.orders) j.string(o);
      j.end_array();
      j.key("address");
      write_address(j, r);
      j.end_object();
      break;
    case Kind::order:
    case Kind::order_items:
    case Kind::refund:
      j.key("order");
      j.begin_object();
      j.kv("id", r.pick(e.orders));
      j.kv("state", r.chance(500) ? "delivered" : "pending");
      j.key("total");
      j.money(r.range(500, 300000));
      j.key("items");
      write_items(j, r, e);
      j.end_object();
      break;
    default:
      j.kv("id", ident(r, "res_"));
      j.key("data");
      j.begin_object();
      j.kv("count", r.range(0, 40));
      j.kv("note", sentence(r, 3, 10));
      j.end_object();
  }
  j.end_object();
}

// Draws a tool by weight.
class ToolPicker {
 public:
  ToolPicker() {
    for (std::size_t i = 0; i < kTools.size(); ++i) {
      total_ += kTools[i].weight;
      cumulative_.push_back(total_);
    }
  }
  std::size_t pick(Rng& r) const {
    int x = static_cast<int>(r.next() % static_cast<std::uint64_t>(total_));
    return static_cast<std::size_t>(std::upper_bound(cumulative_.begin(), cumulative_.end(), x) -
                                    cumulative_.begin());
  }

 private:
  std::vector<int> cumulative_;
  int total_ = 0;
};

std::size_t tool_index(std::string_view name) {
  for (std::size_t i = 0; i < kTools.size(); ++i)
    if (name == kTools[i].name) return i;
  std::fprintf(stderr, "gen_traces: unknown tool %.*s\n", static_cast<int>(name.size()), name.data());
  std::exit(3);
}

// ---------------------------------------------------------------- native traces

struct Stats {
  std::uint64_t traces = 0, steps = 0, calls = 0, text_results = 0, errors = 0, approvals = 0,
                bytes = 0;
};

struct NativeOptions {
  int min_steps = 5;
  int max_steps = 40;
  int text_per_mille = 800;  // of tool calls to text-result tools that return long text
};

// Writes one native trace with `n` steps (approvals and retries count as steps).
class TraceWriter {
 public:
  TraceWriter(Rng& r, Stats& stats, NativeOptions opt) : r_(r), stats_(stats), opt_(opt) {}

  void write(Json& j, std::uint64_t index, std::uint64_t n) {
    e_.make(r_);
    call_no_ = 0;
    steps_ = 0;
    j.begin_object();
    j.kv("trace_id", "trace_" + std::to_string(index));
    j.key("context");
    j.begin_object();
    j.kv("user_id", "u_" + std::to_string(r_.range(1, 50000)));
    j.kv("tenant", r_.pick(kTenants));
    j.kv("channel", r_.pick(kChannels));
    j.kv("vip", r_.chance(100));
    j.end_object();
    j.key("steps");
    j.begin_array();
    const bool session = r_.chance(300);  // login … logout around the work
    user_message(j);
    if (session) call(j, tool_index("login"), false);
    std::size_t last = kTools.size();
    while (steps_ + (session ? 2 : 1) < n) {
      int x = static_cast<int>(r_.range(0, 999));
      if (x < 110) {
        assistant_message(j);
      } else if (x < 170) {
        user_message(j);
      } else if (x < 185 && last < kTools.size()) {
        call(j, last, true);  // an exact repeat (duplicate / retry)
      } else {
        std::size_t t = picker_.pick(r_);
        if (kTools[t].needs_approval && r_.chance(880) && steps_ + 4 < n) approve(j, t);
        else call(j, t, false);
        last = t;
      }
    }
    if (session) call(j, tool_index("logout"), false);
    if (steps_ < n) assistant_message(j);
    j.end_array();
    j.end_object();
    stats_.traces++;
  }

 private:
  void user_message(Json& j) {
    j.begin_object();
    j.kv("type", "user_message");
    j.kv("content", sentence(r_, 4, 30) + (r_.chance(300) ? " My order is " + r_.pick(e_.orders) + "." : ""));
    j.end_object();
    steps_++;
    stats_.steps++;
  }
  void assistant_message(Json& j) {
    j.begin_object();
    j.kv("type", "assistant_message");
    std::string text = sentence(r_, 5, 40);
    if (r_.chance(150)) text += " Could you confirm the order number?";
    j.kv("content", text);
    j.end_object();
    steps_++;
    stats_.steps++;
  }
  void approve(Json& j, std::size_t t) {
    std::string id = "call_" + std::to_string(call_no_ + 1);
    std::string order = r_.pick(e_.orders);
    j.begin_object();
    j.kv("type", "approval_request");
    j.kv("policy", kTools[t].name + std::string("-v2"));
    j.kv("tool_call_id", id);
    j.key("arguments");
    j.begin_object();
    j.kv("order_id", order);
    j.end_object();
    j.end_object();
    bool approved = r_.chance(900);
    j.begin_object();
    j.kv("type", "approval");
    j.kv("decision", approved ? "approved" : "denied");
    j.kv("tool_call_id", id);
    j.kv("approver", r_.chance(500) ? "supervisor" : "policy-engine");
    j.end_object();
    steps_ += 2;
    stats_.steps += 2;
    stats_.approvals++;
    if (approved || r_.chance(100)) call(j, t, false);
  }
  void call(Json& j, std::size_t t, bool repeat) {
    const Tool& tool = kTools[t];
    j.begin_object();
    j.kv("type", "tool_call");
    j.kv("id", "call_" + std::to_string(++call_no_));
    j.kv("tool", tool.name);
    j.key("arguments");
    if (repeat && !last_args_.empty()) {
      j.raw(last_args_);
    } else {
      Json a;
      write_arguments(a, r_, tool, e_);
      last_args_ = a.out;
      j.raw(a.out);
    }
    bool failed = r_.chance(40);
    j.key("result");
    if (failed) {
      j.begin_object();
      j.kv("error", r_.pick(kErrors));
      j.kv("code", "E" + std::to_string(r_.range(400, 504)));
      j.end_object();
      stats_.errors++;
    } else if (tool.text_result && r_.chance(opt_.text_per_mille)) {
      j.string(long_text(r_));
      stats_.text_results++;
    } else {
      write_result(j, r_, tool, e_);
    }
    j.kv("status", failed ? "error" : "ok");
    j.kv("latency_ms", r_.range(3, 2500));
    j.end_object();
    steps_++;
    stats_.steps++;
    stats_.calls++;
  }

  Rng& r_;
  Stats& stats_;
  NativeOptions opt_;
  Entities e_;
  ToolPicker picker_;
  std::uint64_t call_no_ = 0, steps_ = 0;
  std::string last_args_;
};

// Buffers output and writes it in large blocks.
class Output {
 public:
  explicit Output(const char* path) {
    f_ = std::strcmp(path, "-") == 0 ? stdout : std::fopen(path, "wb");
    if (!f_) {
      std::perror(path);
      std::exit(2);
    }
  }
  ~Output() {
    if (f_ != stdout) std::fclose(f_);
  }
  void write(std::string_view s) {
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) {
      std::perror("write");
      std::exit(2);
    }
    bytes += s.size();
  }
  std::uint64_t bytes = 0;

 private:
  std::FILE* f_;
};

void print_stats(const char* what, const Stats& s) {
  std::fprintf(stderr,
               "gen_traces %s: %" PRIu64 " traces, %" PRIu64 " steps, %" PRIu64 " tool calls, %" PRIu64
               " long text results (%.1f%% of steps), %" PRIu64 " errors, %" PRIu64
               " approvals, %" PRIu64 " bytes\n",
               what, s.traces, s.steps, s.calls, s.text_results,
               s.steps ? 100.0 * static_cast<double>(s.text_results) / static_cast<double>(s.steps) : 0.0,
               s.errors, s.approvals, s.bytes);
}

int gen_native(const char* path, std::uint64_t target_bytes, std::uint64_t seed, NativeOptions opt) {
  Rng r(seed);
  Stats stats;
  Output out(path);
  TraceWriter w(r, stats, opt);
  Json j;
  std::string block;
  for (std::uint64_t i = 0; out.bytes + block.size() < target_bytes; ++i) {
    j.clear();
    w.write(j, i, static_cast<std::uint64_t>(r.range(opt.min_steps, opt.max_steps)));
    block += j.out;
    block += '\n';
    if (block.size() > (1u << 22)) {
      out.write(block);
      block.clear();
    }
  }
  out.write(block);
  stats.bytes = out.bytes;
  print_stats("native", stats);
  return 0;
}

// `traces` traces of exactly `steps` steps each, written step by step so that a trace of a
// million steps never sits in memory whole.
int gen_long(const char* path, std::uint64_t steps, std::uint64_t traces, std::uint64_t seed) {
  Rng r(seed);
  Stats stats;
  Output out(path);
  NativeOptions opt;
  opt.text_per_mille = 0;  // scaling runs measure steps, not text bytes
  // Reuses the trace writer in chunks of 40 steps by generating whole short traces and
  // splicing their step arrays together.
  TraceWriter w(r, stats, opt);
  Json j;
  std::string block;
  for (std::uint64_t t = 0; t < traces; ++t) {
    block += "{\"trace_id\":\"long_" + std::to_string(t) + "\",\"context\":{\"tenant\":\"acme\"},\"steps\":[";
    std::uint64_t written = 0;
    bool first = true;
    while (written < steps) {
      std::uint64_t chunk = std::min<std::uint64_t>(40, steps - written);
      j.clear();
      std::uint64_t before = stats.steps;
      w.write(j, t, chunk);
      std::uint64_t made = stats.steps - before;
      // Cut the steps array out of {"trace_id":…,"steps":[ … ]}.
      std::size_t open = j.out.find("\"steps\":[") + 9;
      std::size_t close = j.out.size() - 2;
      if (close > open) {
        if (!first) block += ',';
        block.append(j.out, open, close - open);
        first = false;
      }
      written += made;
      if (block.size() > (1u << 22)) {
        out.write(block);
        block.clear();
      }
    }
    block += "]}\n";
  }
  out.write(block);
  stats.traces = traces;
  stats.bytes = out.bytes;
  print_stats("long", stats);
  return 0;
}

// ---------------------------------------------------------------- agentevals records

struct Call {
  std::size_t tool;
  std::string args;  // JSON object text
};
using Turn = std::vector<Call>;

void write_messages(Json& j, Rng& r, const std::vector<Turn>& turns, const std::string& question,
                    const std::string& answer) {
  j.begin_array();
  j.begin_object();
  j.kv("role", "user");
  j.kv("content", question);
  j.end_object();
  int id = 0;
  for (const Turn& turn : turns) {
    int first_id = id;
    j.begin_object();
    j.kv("role", "assistant");
    j.kv("content", r.chance(250) ? sentence(r, 4, 12) : "");
    j.key("tool_calls");
    j.begin_array();
    for (const Call& c : turn) {
      j.begin_object();
      j.kv("id", "call_" + std::to_string(++id));
      j.kv("type", "function");
      j.key("function");
      j.begin_object();
      j.kv("name", kTools[c.tool].name);
      j.kv("arguments", c.args);  // OpenAI sends arguments as a JSON string
      j.end_object();
      j.end_object();
    }
    j.end_array();
    j.end_object();
    for (std::size_t k = 0; k < turn.size(); ++k) {
      j.begin_object();
      j.kv("role", "tool");
      j.kv("tool_call_id", "call_" + std::to_string(first_id + 1 + static_cast<int>(k)));
      j.kv("content", "{\"status\":\"ok\",\"note\":\"" + sentence(r, 2, 8) + "\"}");
      j.end_object();
    }
  }
  j.begin_object();
  j.kv("role", "assistant");
  j.kv("content", answer);
  j.end_object();
  j.end_array();
}

Call random_call(Rng& r, const ToolPicker& picker, const Entities& e) {
  std::size_t t = picker.pick(r);
  Json a;
  write_arguments(a, r, kTools[t], e);
  return {t, a.out};
}

// Changes one argument value (or adds a key) of a call: an argument difference.
void perturb_arguments(Rng& r, Call& c) {
  std::string& s = c.args;
  if (s == "{}" || r.chance(300)) {  // an extra key: superset-compatible
    std::string extra = std::string(s.size() > 2 ? "," : "") + "\"trace_note\":\"retry\"";
    s.insert(s.size() - 1, extra);
    return;
  }
  // Alter the first string value: find `":"` and change the character after it.
  std::size_t p = s.find("\":\"");
  if (p == std::string::npos) {
    s.insert(s.size() - 1, ",\"trace_note\":\"retry\"");
    return;
  }
  std::size_t v = p + 3;
  if (v < s.size() && s[v] != '"') s[v] = s[v] == 'x' ? 'y' : 'x';
  else s.insert(v, "x");
}

int gen_agentevals(const char* path, std::uint64_t records, int calls, std::uint64_t seed) {
  Rng r(seed);
  Output out(path);
  ToolPicker picker;
  Entities e;
  Json j;
  std::string block;
  std::uint64_t identical = 0;
  for (std::uint64_t i = 0; i < records; ++i) {
    e.make(r);
    // Reference: calls grouped into assistant turns of 1–3 parallel calls.
    std::vector<Turn> ref;
    int n = static_cast<int>(r.range(calls - 3, calls + 3));
    for (int k = 0; k < n;) {
      Turn t;
      int size = r.chance(700) ? 1 : static_cast<int>(r.range(2, 3));
      for (int m = 0; m < size && k < n; ++m, ++k) t.push_back(random_call(r, picker, e));
      ref.push_back(std::move(t));
    }
    // Actual: the reference with realistic variation, each kind independently.
    std::vector<Turn> act = ref;
    bool changed = false;
    if (r.chance(150)) {  // parallel calls reported in another order: harmless for every mode
      for (Turn& t : act)
        if (t.size() > 1) std::swap(t[0], t[1]);
    }
    if (r.chance(250) && act.size() > 2) {  // two turns swapped
      std::size_t a = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(act.size()) - 2));
      std::swap(act[a], act[a + 1]);
      changed = true;
    }
    if (r.chance(250)) {  // missing calls
      for (int m = 0, k = static_cast<int>(r.range(1, 3)); m < k && act.size() > 1; ++m) {
        std::size_t a = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(act.size()) - 1));
        Turn& t = act[a];
        t.erase(t.begin() + static_cast<std::ptrdiff_t>(r.next() % t.size()));
        if (t.empty()) act.erase(act.begin() + static_cast<std::ptrdiff_t>(a));
      }
      changed = true;
    }
    if (r.chance(250)) {  // extra calls (a retry, an unneeded lookup)
      for (int m = 0, k = static_cast<int>(r.range(1, 3)); m < k; ++m) {
        std::size_t a = static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(act.size())));
        if (r.chance(500) && a < act.size() && !act[a].empty()) act[a].push_back(act[a][0]);
        else act.insert(act.begin() + static_cast<std::ptrdiff_t>(a), Turn{random_call(r, picker, e)});
      }
      changed = true;
    }
    if (r.chance(250)) {  // argument differences
      for (int m = 0, k = static_cast<int>(r.range(1, 2)); m < k; ++m) {
        Turn& t = act[static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(act.size()) - 1))];
        perturb_arguments(r, t[r.next() % t.size()]);
      }
      changed = true;
    }
    if (!changed) identical++;
    std::string question = sentence(r, 6, 20);
    std::string answer = sentence(r, 5, 25);
    j.clear();
    j.begin_object();
    j.kv("id", "case_" + std::to_string(i));
    j.key("outputs");
    write_messages(j, r, act, question, answer);
    j.key("reference_outputs");
    write_messages(j, r, ref, question, answer);
    j.end_object();
    block += j.out;
    block += '\n';
    if (block.size() > (1u << 22)) {
      out.write(block);
      block.clear();
    }
  }
  out.write(block);
  std::fprintf(stderr,
               "gen_traces agentevals: %" PRIu64 " records (%" PRIu64 " without call-level changes), %" PRIu64
               " bytes\n",
               records, identical, out.bytes);
  return 0;
}

// ---------------------------------------------------------------- rule files for scaling

// N rules cycling through statement families over the vocabulary; each in its own `rule`
// block so that names never collide.
int gen_rules(const char* path, int count, std::uint64_t seed) {
  Rng r(seed);
  Output out(path);
  std::vector<std::size_t> drawable;
  for (std::size_t i = 0; i < kTools.size(); ++i)
    if (kTools[i].weight > 0) drawable.push_back(i);
  std::string s = "# generated by gen_traces rules --count " + std::to_string(count) + "\n";
  for (int i = 0; i < count; ++i) {
    const char* a = kTools[r.pick(drawable)].name;
    const char* b = a;
    while (b == a) b = kTools[r.pick(drawable)].name;  // `x requires x` can never be violated
    std::string stmt;
    switch (i % 12) {
      case 0: stmt = std::string("forbid ") + a + " where arguments.order_id == \"ord_" + std::to_string(i) + "\""; break;
      case 1: stmt = std::string(a) + " at most " + std::to_string(r.range(2, 6)); break;
      case 2: stmt = std::string("approval where decision == \"approved\" precedes ") + a; break;
      case 3: stmt = std::string(a) + " is followed by " + b; break;
      case 4: stmt = std::string(a) + " is never followed by " + b; break;
      case 5: stmt = std::string("no duplicate ") + a; break;
      case 6: stmt = std::string(a) + " at most 2 in a row"; break;
      case 7: stmt = std::string("retries of ") + a + " at most 1"; break;
      case 8: stmt = std::string(a) + " requires " + b; break;
      case 9: stmt = std::string(a) + " excludes " + b; break;
      case 10: stmt = std::string("forbid ") + a + " where status == \"error\" and latency_ms > 2000"; break;
      case 11: stmt = std::string(a) + " immediately precedes " + b + " ignoring assistant_message"; break;
    }
    s += "rule r" + std::to_string(i) + ":\n    " + stmt + "\n";
  }
  out.write(s);
  return 0;
}

// ---------------------------------------------------------------- command line

[[noreturn]] void usage() {
  std::fputs(
      "usage: gen_traces native     -o FILE [--bytes N] [--min-steps N] [--max-steps N] [--seed S]\n"
      "       gen_traces long       -o FILE --steps N [--traces N] [--seed S]\n"
      "       gen_traces agentevals -o FILE [--records N] [--calls N] [--seed S]\n"
      "       gen_traces rules      -o FILE --count N [--seed S]\n"
      "Deterministic: the same arguments write the same bytes. FILE may be - (stdout).\n",
      stderr);
  std::exit(2);
}

std::uint64_t number(const char* s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s) usage();
  switch (*end) {  // 500M, 2G, 20k
    case 'k': case 'K': v *= 1000ull; break;
    case 'M': v *= 1000000ull; break;
    case 'G': v *= 1000000000ull; break;
    case '\0': break;
    default: usage();
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage();
  std::string mode = argv[1];
  const char* path = nullptr;
  std::uint64_t seed = 7, bytes = 500000000ull, steps = 0, traces = 1, records = 20000, count = 0;
  std::uint64_t calls = 20;
  NativeOptions opt;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage();
    const char* v = argv[++i];
    if (a == "-o") path = v;
    else if (a == "--seed") seed = number(v);
    else if (a == "--bytes") bytes = number(v);
    else if (a == "--steps") steps = number(v);
    else if (a == "--traces") traces = number(v);
    else if (a == "--records") records = number(v);
    else if (a == "--calls") calls = number(v);
    else if (a == "--count") count = number(v);
    else if (a == "--min-steps") opt.min_steps = static_cast<int>(number(v));
    else if (a == "--max-steps") opt.max_steps = static_cast<int>(number(v));
    else usage();
  }
  if (!path) usage();
  if (mode == "native") {
    if (opt.min_steps < 3 || opt.max_steps < opt.min_steps) usage();
    return gen_native(path, bytes, seed, opt);
  }
  if (mode == "long") {
    if (steps == 0) usage();
    return gen_long(path, steps, traces, seed);
  }
  if (mode == "agentevals") {
    if (calls < 4) usage();
    return gen_agentevals(path, records, static_cast<int>(calls), seed);
  }
  if (mode == "rules") {
    if (count == 0) usage();
    return gen_rules(path, static_cast<int>(count), seed);
  }
  usage();
}
