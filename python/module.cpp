// trajcheck._native: the Python binding over the public C++ API, wrapped by the Python package
// (python/trajcheck/__init__.py). Python values become JSON text here and are read by the
// library's readers; everything that checks, scores or reports is the library's own code, so
// results equal the command line's. The GIL is released while a trace is parsed and checked.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "json/swar.hpp"  // the library's eight-bytes-at-a-time byte tests
#include "trajcheck/diagnostic.hpp"
#include "trajcheck/eval.hpp"
#include "trajcheck/metrics.hpp"
#include "trajcheck/json_string.hpp"
#include "trajcheck/guard.hpp"
#include "trajcheck/monitor.hpp"
#include "trajcheck/reader.hpp"
#include "trajcheck/report.hpp"
#include "trajcheck/rules.hpp"
#include "trajcheck/run.hpp"
#include "trajcheck/score_run.hpp"

namespace py = pybind11;

namespace trajcheck::python {
namespace {

// ---------------------------------------------------------------------------------------
// Errors: raised as the Python classes of trajcheck._types, carrying the CLI's text.

// Kept for the life of the process: a static py::object would be released after the
// interpreter has finalized.
py::module_& types() {
  static py::module_* m = new py::module_(py::module_::import("trajcheck._types"));
  return *m;
}

[[noreturn]] void raise(py::object instance) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr())), instance.ptr());
  throw py::error_already_set();
}

std::string without_newline(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

[[noreturn]] void raise_trace_error(const std::vector<RecordError>& errors) {
  std::string text;
  for (const RecordError& e : errors) text += format_record_error(e);
  const RecordError& first = errors.front();
  raise(types().attr("TraceError")(without_newline(text), first.where.file, first.where.line,
                                   first.where.column, first.message));
}

// A path from Python: a std::string keeps a NUL byte, but the file system stops at it, so
// 'x.rules\0.txt' would open x.rules. Refused, as Python's own open() refuses it.
const std::string& checked_path(const std::string& path) {
  if (path.find('\0') == std::string::npos) return path;
  std::string shown;
  for (char c : path) shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
  throw py::value_error(shown + ": the path contains a NUL byte");
}
const std::vector<std::string>& checked_paths(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) checked_path(p);
  return paths;
}

[[noreturn]] void raise_option_error(const std::string& message) {
  raise(types().attr("OptionError")(message));
}

py::object diagnostic_tuple(const Source& src, const Diagnostic& d) {
  LineCol lc = src.line_col(d.range.begin);
  return types().attr("Diagnostic")(d.code, std::string(to_string(d.severity)), src.name(), lc.line,
                                     lc.column, d.message);
}

[[noreturn]] void raise_rules_error(const RuleSetResult& r) {
  py::list diags;
  for (const RuleFile& f : r.files) {
    if (!f.read_error.empty())
      diags.append(types().attr("Diagnostic")("", "error", f.name, 0, 0, f.read_error));
    for (const Diagnostic& d : f.diagnostics) diags.append(diagnostic_tuple(f.source, d));
  }
  raise(types().attr("RulesError")(without_newline(r.format_diagnostics(false, true)), diags));
}

FailOn fail_on_from(const std::string& name) {
  FailOn f;
  if (!parse_fail_on(name, &f))
    raise_option_error("unknown fail_on '" + name + "' (critical, error, warning, info or never)");
  return f;
}

// ---------------------------------------------------------------------------------------
// Python values as JSON text: the text json.dumps(v, separators=(",", ":"), ensure_ascii=False,
// allow_nan=False) gives (same key order, number spellings and escapes), written without
// building intermediate Python strings. A str is encoded and escaped in one pass from CPython's
// own storage, and everything goes through a pointer into a buffer grown ahead of need, so a
// key, a comma or a `null` is a few stores rather than a std::string append each.

// A str's UTF-8 (CPython's, kept in the object), or the error for a str that has none.
std::string_view utf8_of(PyObject* s) {
  Py_ssize_t n;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (!p) throw py::error_already_set();
  return {p, static_cast<std::size_t>(n)};
}

// Writes into a std::string through a pointer: room(k) makes room for k more bytes and returns
// where they go, commit(end) records what was written. The writer starts at `at` and takes the
// string's bytes after it as scratch, growing its size ahead (doubling) only when they run out:
// a buffer used again for text of about the same length is neither reallocated nor cleared. With
// `trim` the string holds exactly what was committed once the writer is gone (an exception
// included); without, its size stays and size() says how much of it is the text.
class TextWriter {
 public:
  TextWriter(std::string& s, std::size_t at, bool trim = true) : s_(s), n_(at), trim_(trim) {}
  explicit TextWriter(std::string& s) : TextWriter(s, s.size()) {}
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;
  ~TextWriter() {
    if (trim_) s_.resize(n_);
  }

  [[gnu::always_inline]] char* room(std::size_t k) {
    if (s_.size() - n_ < k) [[unlikely]] grow(k);
    return s_.data() + n_;
  }
  [[gnu::always_inline]] void commit(char* end) { n_ = static_cast<std::size_t>(end - s_.data()); }
  [[gnu::always_inline]] void put(std::string_view t) {
    char* p = room(t.size());
    std::memcpy(p, t.data(), t.size());
    commit(p + t.size());
  }
  [[gnu::always_inline]] void put(char c) {
    char* p = room(1);
    *p = c;
    commit(p + 1);
  }
  std::size_t size() const { return n_; }

 private:
  [[gnu::noinline]] void grow(std::size_t k) { s_.resize(std::max({n_ + k, 2 * s_.size(), std::size_t{256}})); }

  std::string& s_;
  std::size_t n_;
  bool trim_;
};

// Sixteen bytes at a time (GCC and Clang vector extensions: SSE2 on x86-64, NEON on ARM).
using Bytes16 = unsigned char __attribute__((vector_size(16)));
using SignedBytes16 = signed char __attribute__((vector_size(16)));

// Copies the 16 bytes at `in` to `out` whole and returns how many of them come before the first
// that is not plain ASCII (with kEscape: that JSON strings hold raw), 16 when none.
template <bool kEscape>
[[gnu::always_inline]] inline std::size_t copy_plain16(const char* in, char* out) {
  Bytes16 v;
  std::memcpy(&v, in, 16);
  std::memcpy(out, &v, 16);
  const auto s = reinterpret_cast<SignedBytes16>(v);  // bytes from 0x80 up are negative
  SignedBytes16 stop;
  if constexpr (kEscape) stop = (s < 0x20) | (v == '"') | (v == '\\');
  else stop = s < 0;
  std::uint64_t half[2];
  std::memcpy(half, &stop, 16);
  if (half[0]) return swar::first(half[0]);
  if (half[1]) return 8 + swar::first(half[1]);
  return 16;
}

// Copies the plain ASCII characters of one-byte storage `text` (n of them) from i on to `o`,
// advancing both to the first that is not (that JSON strings hold raw, with kEscape): sixteen at
// a time while sixteen are left, then a word of eight; the last word of the str is the one that
// ends with it, shifted down (when n < 8, only with `before`). True when the str has ended.
template <bool kEscape>
[[gnu::always_inline]] inline bool copy_plain(const char* text, std::size_t n, std::size_t& i, char*& o, bool before) {
  std::size_t k = 16;
  while (n - i >= 16 && (k = copy_plain16<kEscape>(text + i, o)) == 16) {
    i += 16;
    o += 16;
  }
  if (k < 16) {
    i += k;
    o += k;
    return false;
  }
  for (;;) {
    if (i == n) return true;
    std::size_t left = n - i;
    std::uint64_t w;
    if (left >= 8) {
      w = swar::load(text + i);
      left = 8;
    } else if (n >= 8 || before) {
      w = swar::load(text + n - 8) >> (8 * (8 - left));  // the last `left`, zeros above
    } else {
      return false;
    }
    std::uint64_t m = w & swar::kHighs;
    if constexpr (kEscape) m |= swar::less(w, 0x20) | swar::equal(w, '"') | swar::equal(w, '\\');
    if (left < 8) m &= (std::uint64_t{1} << (8 * left)) - 1;  // the zeros shifted in are no stop
    std::memcpy(o, &w, 8);  // the whole word; the characters from the first stop on are rewritten
    if (m) {
      k = swar::first(m);
      i += k;
      o += k;
      return false;
    }
    i += left;
    o += left;
  }
}

// n characters of CPython's storage (one, two or four bytes a character) as UTF-8 at `o`, which
// has room for 6 bytes a character and 8 more (a JSON escape is 6 bytes; UTF-8 takes at most 4);
// with kEscape, the characters JSON strings cannot hold raw are written as append_json_string
// writes them. Returns the end, or null at a surrogate (which has no UTF-8).
//
// One-byte storage (ASCII and Latin-1, most strs) goes through copy_plain between the
// characters that are not plain ASCII; with `before`, the 8 bytes before `in` may be read (they
// are the str object's header for a compact str), so a str shorter than eight characters is one
// word too.
template <bool kEscape, class Unit>
char* encode_utf8(const Unit* in, std::size_t n, char* o, bool before) {
  std::size_t i = 0;
  while (i < n) {
    if constexpr (sizeof(Unit) == 1) {
      if (copy_plain<kEscape>(reinterpret_cast<const char*>(in), n, i, o, before)) return o;
    }
    std::uint32_t c = in[i++];
    if (c < 0x80) {
      if (kEscape && json_needs_escape(static_cast<unsigned char>(c))) o = write_json_escape(o, static_cast<unsigned char>(c));
      else *o++ = static_cast<char>(c);
    } else if (c < 0x800) {
      *o++ = static_cast<char>(0xC0 | (c >> 6));
      *o++ = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      if (c >= 0xD800 && c <= 0xDFFF) return nullptr;
      *o++ = static_cast<char>(0xE0 | (c >> 12));
      *o++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *o++ = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      *o++ = static_cast<char>(0xF0 | (c >> 18));
      *o++ = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      *o++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *o++ = static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return o;
}

// A str's UTF-8 written out, as a JSON string literal (quotes and escapes) with kEscape, else as
// it is. In pieces of 512 characters, so the room asked ahead stays small for a long str. A str
// that holds a surrogate goes to utf8_of, which raises CPython's own UnicodeEncodeError.
template <bool kEscape>
void write_str(TextWriter& out, PyObject* s) {
  constexpr std::size_t kPiece = 512;
  // A compact str's characters follow its header, which is longer than 8 bytes.
  static_assert(sizeof(PyASCIIObject) >= 8);
  if (kEscape && PyUnicode_IS_COMPACT_ASCII(s)) {  // most strs: one piece, no surrogate, no kind to pick
    const std::size_t n = static_cast<std::size_t>(PyUnicode_GET_LENGTH(s));
    if (n <= kPiece) {
      const char* text = reinterpret_cast<const char*>(PyUnicode_1BYTE_DATA(s));
      char* o = out.room(6 * n + 8 + 2);
      *o++ = '"';
      std::size_t i = 0;
      if (!copy_plain<true>(text, n, i, o, true))  // stopped at a character to escape
        o = encode_utf8<true>(reinterpret_cast<const Py_UCS1*>(text + i), n - i, o, true);
      *o++ = '"';
      return out.commit(o);
    }
  }
  if (PyUnicode_READY(s) < 0) throw py::error_already_set();
  const std::size_t n = static_cast<std::size_t>(PyUnicode_GET_LENGTH(s));
  const void* data = PyUnicode_DATA(s);
  const int kind = PyUnicode_KIND(s);
  if (!kEscape && PyUnicode_IS_ASCII(s)) return out.put(std::string_view(static_cast<const char*>(data), n));
  const bool compact = PyUnicode_IS_COMPACT(s);
  std::size_t at = 0;
  do {
    const std::size_t m = std::min(kPiece, n - at);
    char* o = out.room(6 * m + 8 + 2);
    char* const start = o;
    if (kEscape && at == 0) *o++ = '"';
    o = kind == PyUnicode_1BYTE_KIND
            ? encode_utf8<kEscape>(static_cast<const Py_UCS1*>(data) + at, m, o, compact || at > 0)
        : kind == PyUnicode_2BYTE_KIND ? encode_utf8<kEscape>(static_cast<const Py_UCS2*>(data) + at, m, o, false)
                                       : encode_utf8<kEscape>(static_cast<const Py_UCS4*>(data) + at, m, o, false);
    if (!o) {
      out.commit(start);
      utf8_of(s);  // raises: a surrogate cannot be encoded
      throw py::value_error("a str with a surrogate");  // not reached
    }
    at += m;
    if (kEscape && at == n) *o++ = '"';
    out.commit(o);
  } while (at < n);
}

// float.__repr__ of a finite double: the shortest digits that read back as it (std::to_chars
// finds the same ones as CPython's dtoa, without its allocations), spelled as repr spells them:
// with an exponent when the decimal point would be more than 16 places right of the first digit
// or 4 or more places left of it ("1e+16", "1e-05", "1.5e+300"), else positional with at least
// one digit after the point ("1234567890123456.0", "0.0001").
void write_float_repr(TextWriter& out, double d) {
  char sci[32];
  char* end = std::to_chars(sci, sci + sizeof sci, d, std::chars_format::scientific).ptr;
  const char* p = sci;
  char* o = out.room(32);
  if (*p == '-') *o++ = *p++;
  char digits[20];
  int nd = 0;
  for (; *p != 'e'; ++p)
    if (*p != '.') digits[nd++] = *p;
  int exp = 0;
  std::from_chars(p + 1 + (p[1] == '+'), end, exp);
  const int point = exp + 1;  // digits[0..point) before the decimal point
  if (point > 16 || point <= -4) {
    *o++ = digits[0];
    if (nd > 1) {
      *o++ = '.';
      o = std::copy(digits + 1, digits + nd, o);
    }
    *o++ = 'e';
    *o++ = exp < 0 ? '-' : '+';
    const int e = exp < 0 ? -exp : exp;
    if (e < 10) *o++ = '0';
    o = std::to_chars(o, o + 4, e).ptr;
  } else if (point <= 0) {
    *o++ = '0';
    *o++ = '.';
    o = std::fill_n(o, -point, '0');
    o = std::copy(digits, digits + nd, o);
  } else if (point >= nd) {
    o = std::copy(digits, digits + nd, o);
    o = std::fill_n(o, point - nd, '0');
    *o++ = '.';
    *o++ = '0';
  } else {
    o = std::copy(digits, digits + point, o);
    *o++ = '.';
    o = std::copy(digits + point, digits + nd, o);
  }
  out.commit(o);
}

void write_number(TextWriter& out, PyObject* v) {
  if (PyLong_Check(v)) {
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow == 0 && !(x == -1 && PyErr_Occurred())) {
      char* o = out.room(24);
      out.commit(std::to_chars(o, o + 24, x).ptr);
      return;
    }
    PyErr_Clear();
    py::object r = py::reinterpret_steal<py::object>(PyLong_Type.tp_repr(v));  // a big int
    if (!r) throw py::error_already_set();
    out.put(utf8_of(r.ptr()));
    return;
  }
  double d = PyFloat_AS_DOUBLE(v);
  if (!std::isfinite(d)) throw py::value_error("Out of range float values are not JSON compliant");
  write_float_repr(out, d);
}

// A Python value's JSON text written to a TextWriter, for one value: str keys are remembered by
// address with where their `"key":` went in the text (a small direct-mapped table), and written
// again by copying that. json.loads gives every occurrence of a key the one str object, so the
// keys of a trace's steps are encoded once. Addresses stay valid while the writer works: no
// Python code runs meanwhile, so no key is freed and its address taken by another.
class JsonWriter {
 public:
  explicit JsonWriter(TextWriter& out) : out_(out) {}
  void value(PyObject* v, int depth);

 private:
  static std::size_t slot_of(PyObject* k);
  bool copy_key(PyObject* k);  // writes `"key":` again, when k is a key written before
  void key(PyObject* k);       // writes a str key `"key":`, remembered for copy_key
  void object(PyObject* dict, int depth);  // a dict (or a subclass)
  void array(PyObject* seq, int depth);    // a list or a tuple (or a subclass)

  // A trace of the benchmark's has about 50 distinct keys: 256 slots keep most apart.
  static constexpr unsigned kSlotBits = 8;
  static constexpr std::size_t kSlots = std::size_t{1} << kSlotBits, kLongest = 64;  // keys longer are not kept
  TextWriter& out_;
  PyObject* keys_[kSlots] = {};
  std::uint32_t key_at_[kSlots], key_len_[kSlots];
};

std::size_t JsonWriter::slot_of(PyObject* k) {
  // Fibonacci hashing: the address's bits mixed into the top ones, which pick the slot.
  const auto a = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(k));
  return static_cast<std::size_t>((a * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
}

bool JsonWriter::copy_key(PyObject* k) {
  const std::size_t slot = slot_of(k);
  if (keys_[slot] != k) return false;
  // The earlier copy, wholly before `o`, in 16-byte blocks (a call to memcpy costs more than
  // these few): the bytes past `len` it overwrites are the scratch after the text.
  const std::size_t len = key_len_[slot];
  char* o = out_.room(kLongest + 16);
  const char* from = o - (out_.size() - key_at_[slot]);
  for (std::size_t i = 0; i < len; i += 16) {
    char block[16];  // read whole before it is written: the two may overlap past `len`
    std::memcpy(block, from + i, 16);
    std::memcpy(o + i, block, 16);
  }
  out_.commit(o + len);
  return true;
}

void JsonWriter::key(PyObject* k) {
  const std::size_t at = out_.size();
  write_str<true>(out_, k);
  out_.put(':');
  const std::size_t len = out_.size() - at;
  if (PyUnicode_CheckExact(k) && len <= kLongest && at <= UINT32_MAX) {
    const std::size_t slot = slot_of(k);
    keys_[slot] = k;
    key_at_[slot] = static_cast<std::uint32_t>(at);
    key_len_[slot] = static_cast<std::uint32_t>(len);
  }
}

void JsonWriter::value(PyObject* v, int depth) {
  if (depth > 1000) throw py::value_error("a value nested more than 1000 levels deep");
  // The exact types json.loads makes, each by one comparison of the type; subclasses below.
  PyTypeObject* const type = Py_TYPE(v);
  if (type == &PyUnicode_Type) return write_str<true>(out_, v);
  if (type == &PyDict_Type) return object(v, depth);
  if (type == &PyList_Type) return array(v, depth);
  if (v == Py_None) return out_.put("null");
  if (v == Py_True) return out_.put("true");
  if (v == Py_False) return out_.put("false");
  if (PyUnicode_Check(v)) return write_str<true>(out_, v);
  if (PyLong_Check(v) || PyFloat_Check(v)) return write_number(out_, v);
  if (PyDict_Check(v)) return object(v, depth);
  if (PyList_Check(v) || PyTuple_Check(v)) return array(v, depth);
  throw py::type_error(std::string("Object of type ") + type->tp_name + " is not JSON serializable");
}

void JsonWriter::object(PyObject* v, int depth) {
  out_.put('{');
  PyObject *k, *item;
  Py_ssize_t pos = 0;
  bool first = true;
  while (PyDict_Next(v, &pos, &k, &item)) {
    if (!first) out_.put(',');
    first = false;
    if (copy_key(k)) {
      // written again from its first occurrence, without reading the str
    } else if (PyUnicode_Check(k)) {
      key(k);
    } else if (k == Py_None || k == Py_True || k == Py_False || PyLong_Check(k) || PyFloat_Check(k)) {
      out_.put('"');  // json's spelling of a non-string key, quoted (it has nothing to escape)
      value(k, depth + 1);
      out_.put("\":");
    } else {
      throw py::type_error(std::string("keys must be str, int, float, bool or None, not ") + Py_TYPE(k)->tp_name);
    }
    value(item, depth + 1);
  }
  out_.put('}');
}

void JsonWriter::array(PyObject* v, int depth) {
  out_.put('[');
  Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (i) out_.put(',');
    value(items[i], depth + 1);
  }
  out_.put(']');
}

void write_json_value(TextWriter& out, PyObject* v) { JsonWriter(out).value(v, 0); }

void append_json_value(std::string& out, PyObject* v) {
  TextWriter w(out);
  write_json_value(w, v);
}

// The JSON text of a trace given to the package, written at the start of `buffer` (whose size
// only grows, its bytes past the text kept as room for the next), with kRecordPadding readable
// bytes after it, as the reader wants them: a str as its UTF-8, encoded here from CPython's
// storage (CPython's own encoder goes one character at a time into a cache kept with the object,
// which would then be copied again), bytes-like objects as they are, dicts, lists and tuples
// encoded.
std::string_view padded_trace_text(std::string& buffer, py::handle v, const char* what) {
  PyObject* o = v.ptr();
  std::size_t n;
  {
    TextWriter w(buffer, 0, false);
    if (PyUnicode_Check(o)) write_str<false>(w, o);
    else if (PyDict_Check(o) || PyList_Check(o) || PyTuple_Check(o)) write_json_value(w, o);
    else if (PyBytes_Check(o)) w.put({PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o))});
    else if (PyByteArray_Check(o)) w.put({PyByteArray_AS_STRING(o), static_cast<std::size_t>(PyByteArray_GET_SIZE(o))});
    else if (PyMemoryView_Check(o)) w.put(std::string(py::bytes(py::reinterpret_borrow<py::object>(v))));
    else
      throw py::type_error(std::string(what) + ": expected a dict, a list or JSON text (str or bytes), not " +
                           Py_TYPE(o)->tp_name);
    n = w.size();
  }
  if (buffer.size() < n + kRecordPadding) buffer.resize(n + kRecordPadding);
  return {buffer.data(), n};
}

// The same as a view: of the object's own bytes where it has them (str, bytes, bytearray),
// else of `buffer`, which then holds the text (written, and refused, as padded_trace_text does).
std::string_view trace_text(py::handle v, std::string& buffer, const char* what) {
  PyObject* o = v.ptr();
  if (PyUnicode_Check(o)) return utf8_of(o);
  if (PyBytes_Check(o)) return {PyBytes_AS_STRING(o), static_cast<std::size_t>(PyBytes_GET_SIZE(o))};
  if (PyByteArray_Check(o))
    return {PyByteArray_AS_STRING(o), static_cast<std::size_t>(PyByteArray_GET_SIZE(o))};
  return padded_trace_text(buffer, v, what);
}

// ---------------------------------------------------------------------------------------
// Reports

// One checked trace (or one rejected record), self-contained: it keeps the trajectory so that
// it can be rendered as `check` renders it, and the rule set so that rule ids have names.
struct Report {
  std::shared_ptr<const RuleSet> rules;
  FailOn fail_on;
  Trajectory trace;  // its tool table is not kept: reports read text only
  TraceVerdict verdict;
  bool rejected = false;
  RecordError error;  // when rejected

  bool passed() const { return !rejected && !verdict.failed; }

  std::string text() const {
    if (rejected) return without_newline(format_record_error(error));
    CheckReportOptions o;
    o.fail_on = fail_on;
    std::string out;
    CheckReport(rules, o).trace(trace, verdict, out);
    if (out.empty())
      out = "PASS " + std::string(trace.trace_id()) + "  (" + trace.origin.file + ":" +
            std::to_string(trace.origin.line) + ", " + std::to_string(trace.steps().size()) +
            (trace.steps().size() == 1 ? " step)\n" : " steps)\n");
    return out;
  }

  std::string jsonl() const {
    CheckReportOptions o;
    o.format = CheckFormat::jsonl;
    o.fail_on = fail_on;
    std::string out;
    CheckReport report(rules, o);
    if (rejected) report.rejected(error, out);
    else report.trace(trace, verdict, out);
    return without_newline(std::move(out));
  }

  py::list results(bool violated_only) const {
    py::list out;
    py::object result = types().attr("Result");
    py::object loads = py::module_::import("json").attr("loads");
    for (const RuleResult& r : verdict.results) {
      if (violated_only && r.status != VerdictStatus::violated) continue;
      const RuleInfo& info = *rules->rules()[r.rule].info;
      py::dict binding;
      for (const auto& [var, value] : r.binding) binding[py::str(var)] = loads(value);
      py::list steps;
      for (std::uint32_t s : r.steps) steps.append(s);
      out.append(result(info.name, std::string(to_string(info.severity)), std::string(to_string(r.status)),
                        steps, binding, info.message, info.location, r.bindings_dropped));
    }
    return out;
  }

  py::list warnings() const {
    py::list out;
    for (const std::string& w : trace.warnings) out.append(without_newline(w));
    return out;
  }
};

Report make_report(const std::shared_ptr<const RuleSet>& rules, FailOn fail_on, const Trajectory& t,
                   const TraceVerdict& v) {
  Report r;
  r.rules = rules;
  r.fail_on = fail_on;
  r.trace = t;
  r.trace.set_tools(nullptr);
  r.verdict = v;
  // The checker ran with the default --fail-on; pass/fail is the caller's.
  r.verdict.failed = false;
  for (const RuleResult& res : v.results)
    if (res.status == VerdictStatus::violated && fail_on.fails(rules->rules()[res.rule].info->severity))
      r.verdict.failed = true;
  return r;
}

// ---------------------------------------------------------------------------------------
// Rules: a RuleSet, its reader, and a pool of per-thread checkers

// A thread's TraceCheck (the library's one-trace check, as the corpus runner's workers use it)
// and its record buffer, pooled between calls.
struct Worker {
  TraceCheck check;
  RawRecord record;
  std::string text;  // the record's bytes, lent to `record`
  explicit Worker(std::shared_ptr<const RuleSet> rules) : check(std::move(rules)) {}
};

class Rules {
 public:
  Rules(std::shared_ptr<const RuleSet> rules, NormalizeOptions reading)
      : rules_(std::move(rules)),
        reading_(std::move(reading)),
        parser_(std::make_unique<TraceParser>(rules_->reading_options(reading_))) {
    if (!parser_->option_error().empty()) raise_option_error(parser_->option_error());
  }

  const std::shared_ptr<const RuleSet>& rule_set() const { return rules_; }

  // Checks the one trajectory of `trace` (a dict, a list or JSON text in any format), written
  // straight into the worker's buffer, which the record borrows. Called with the GIL held;
  // releases it while the trace is read and checked.
  Report check(py::handle trace, const std::string& fail_on_name) {
    FailOn fail_on = fail_on_from(fail_on_name);
    std::unique_ptr<Worker> w = acquire();
    std::optional<Report> report;
    ParseOutcome outcome;
    {
      RawRecord& rec = w->record;
      rec.borrowed = padded_trace_text(w->text, trace, "trace");
      rec.origin = RecordOrigin{"<trace>", 1, 1, 0};
      py::gil_scoped_release nogil;
      outcome = w->check.check_one(*parser_, rec, [&](const Trajectory& t, const TraceVerdict& v) {
        report = make_report(rules_, fail_on, t, v);
      });
    }
    release(std::move(w));
    if (!outcome.ok()) raise_trace_error(outcome.errors);
    return std::move(*report);
  }

  std::vector<std::string> rule_names() const {
    std::vector<std::string> out;
    for (const auto& r : rules_->rules()) out.push_back(r.info->name);
    return out;
  }

  const NormalizeOptions& reading() const { return reading_; }

 private:
  std::unique_ptr<Worker> acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Worker> w = std::move(free_.back());
        free_.pop_back();
        return w;
      }
    }
    return std::make_unique<Worker>(rules_);
  }
  void release(std::unique_ptr<Worker> w) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < 64) free_.push_back(std::move(w));
  }

  std::shared_ptr<const RuleSet> rules_;
  NormalizeOptions reading_;
  std::unique_ptr<TraceParser> parser_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Worker>> free_;
};

NormalizeOptions reading_options(const std::string& input_format, const std::vector<std::string>& aliases,
                                 const std::vector<std::string>& error_patterns,
                                 const std::vector<std::string>& context) {
  ReadingSpec spec;
  spec.input_format = input_format;
  spec.aliases = aliases;
  spec.error_patterns = error_patterns;
  spec.context = context;
  NormalizeOptions out;
  std::string error;
  if (!parse_reading_spec(spec, &out, &error)) raise_option_error(error);
  return out;
}

std::shared_ptr<Rules> make_rules(RuleSetResult r, NormalizeOptions reading) {
  if (!r.ok()) raise_rules_error(r);
  return std::make_shared<Rules>(std::move(r.rules), std::move(reading));
}

// ---------------------------------------------------------------------------------------
// Guard mode: one Monitor per rules file of the set. A step is read like a trace's (the
// set's reader: names, aliases, error patterns), so decisions agree with Rules.check.

class GuardMonitor {
 public:
  GuardMonitor(std::shared_ptr<Rules> rules, std::string_view context)
      : rules_(std::move(rules)), parser_(rules_->rule_set()->reading_options(rules_->reading())),
        scratch_(&tools_), monitor_(rules_->rule_set()) {
    record_ = R"({"trace_id":"guard","steps":[]})";
    if (!context.empty()) record_ = std::string(R"({"trace_id":"guard","context":)") + std::string(context) + R"(,"steps":[]})";
    read();
    has_context_ = !scratch_.context().empty();
    monitor_.reset(scratch_.context());
  }

  // The one step of `step` (a native step: a dict or its JSON text), read into scratch_.
  void read_step(py::handle step) {
    std::string buffer;
    std::string_view text = trace_text(step, buffer, "step");
    record_.assign(R"({"trace_id":"guard","steps":[)");
    record_.append(text);
    record_.append("]}");
    read();
    if (scratch_.steps().size() != 1)
      throw py::value_error("step: expected one step, read " + std::to_string(scratch_.steps().size()));
  }

  py::list check(py::handle step) {
    read_step(step);
    return run(false);
  }
  py::list observe(py::handle step) {
    read_step(step);
    return run(true);
  }

  // Observes every step of `trace` (a trace in any format the rule set reads: the history
  // so far), in order, and returns the violations they made final. A monitor made without a
  // context that has observed nothing takes the trace's context.
  py::list replay(py::handle trace) {
    if (finished_) throw py::value_error("the monitor has finished; start a new one");
    std::string buffer;
    record_.assign(trace_text(trace, buffer, "history"));
    read();
    if (!has_context_ && monitor_.trace().steps().empty() && !scratch_.context().empty()) {
      has_context_ = true;
      monitor_.reset(scratch_.context());
    }
    py::list out;
    for (std::size_t i = 0; i < scratch_.steps().size(); ++i) {
      monitor_.observe(scratch_, i, found_);
      append_violations(out);
    }
    return out;
  }

  py::list pending() {
    py::list out;
    py::object obligation = types().attr("Obligation");
    monitor_.pending(obligations_);
    for (const Obligation& o : obligations_) {
      const RuleInfo& info = *monitor_.rules().rules()[o.rule].info;
      out.append(obligation(info.name, std::string(to_string(info.severity)), info.message, steps_of(o.steps),
                            binding_of(o.binding), info.location, o.statement));
    }
    return out;
  }

  Report finish(const std::string& fail_on_name) {
    FailOn fail_on = fail_on_from(fail_on_name);
    if (finished_) throw py::value_error("the monitor has finished; start a new one");
    finished_ = true;
    const TraceVerdict& v = monitor_.finish(fail_on);
    Trajectory t = monitor_.trace();
    t.set_trace_id(t.store("guard"));
    t.origin = RecordOrigin{"<monitor>", 1, 1, 0};
    return make_report(rules_->rule_set(), fail_on, t, v);
  }

  std::size_t steps() const { return monitor_.trace().steps().size(); }

 private:
  void read() {
    ParseOutcome outcome = parser_.parse_value(record_, RecordOrigin{"<step>", 1, 1, 0}, scratch_);
    if (!outcome.ok()) raise_trace_error(outcome.errors);
  }

  py::list run(bool take) {
    if (finished_) throw py::value_error("the monitor has finished; start a new one");
    if (take) monitor_.observe(scratch_, 0, found_);
    else monitor_.check(scratch_, 0, found_);
    py::list out;
    append_violations(out);
    return out;
  }

  void append_violations(py::list& out) {
    if (found_.empty()) return;
    py::object violation = types().attr("Violation");
    for (const Violation& x : found_) {
      const RuleInfo& info = *monitor_.rules().rules()[x.rule].info;
      out.append(violation(info.name, std::string(to_string(info.severity)), info.message, steps_of(x.steps),
                           binding_of(x.binding), info.location));
    }
  }

  static py::list steps_of(const std::vector<std::uint32_t>& steps) {
    py::list out;
    for (std::uint32_t s : steps) out.append(s);
    return out;
  }
  static py::dict binding_of(const std::vector<std::pair<std::string, std::string>>& binding) {
    py::dict out;
    if (binding.empty()) return out;
    py::object loads = py::module_::import("json").attr("loads");
    for (const auto& [var, value] : binding) out[py::str(var)] = loads(value);
    return out;
  }

  std::shared_ptr<Rules> rules_;
  TraceParser parser_;
  ToolTable tools_;
  Trajectory scratch_;
  std::string record_;
  RuleSetMonitor monitor_;
  std::vector<Violation> found_;
  std::vector<Obligation> obligations_;
  bool finished_ = false;
  bool has_context_ = false;  // the monitor's trace has a context
};

// ---------------------------------------------------------------------------------------
// check_file: the corpus runner on a thread of its own, reports handed over in input order

// The runner's writer: each record's report is made on the worker that checked it and its
// address appended to the batch text, which the runner hands over in input order.
class ReportWriter final : public CheckWriter {
 public:
  ReportWriter(std::shared_ptr<const RuleSet> rules, FailOn fail_on) : rules_(std::move(rules)), fail_on_(fail_on) {}
  void trace(const Trajectory& t, const TraceVerdict& v, std::string& out) const override {
    append(out, new Report(make_report(rules_, fail_on_, t, v)));
  }
  void rejected(const RecordError& e, std::string& out) const override {
    auto* r = new Report;
    r->rules = rules_;
    r->fail_on = fail_on_;
    r->rejected = true;
    r->error = e;
    r->trace.origin = e.where;
    append(out, r);
  }

 private:
  static void append(std::string& out, Report* r) {
    char bytes[sizeof r];
    std::memcpy(bytes, &r, sizeof r);
    out.append(bytes, sizeof r);
  }
  std::shared_ptr<const RuleSet> rules_;
  FailOn fail_on_;
};

class FileRun {
 public:
  FileRun(std::shared_ptr<Rules> rules, std::vector<std::string> inputs, unsigned jobs, FailOn fail_on)
      : rules_(std::move(rules)), writer_(rules_->rule_set(), fail_on), source_(std::move(inputs), rules_->reading().format) {
    CheckRunOptions o;
    o.reading = rules_->reading();
    o.fail_on = fail_on;
    o.quiet = true;  // warnings travel with each report
    o.jobs = jobs;
    runner_ = std::make_unique<CheckRunner>(rules_->rule_set(), o);
    if (!runner_->option_error().empty()) raise_option_error(runner_->option_error());
    thread_ = std::thread([this] { run(); });
  }

  ~FileRun() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      cancelled_ = true;
      for (Report* r : queue_) delete r;
      queue_.clear();
    }
    room_.notify_all();
    if (thread_.joinable()) {
      py::gil_scoped_release nogil;
      thread_.join();
    }
  }

  // The next report, or null at the end. Waits without the GIL.
  std::unique_ptr<Report> next() {
    py::gil_scoped_release nogil;
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (queue_.empty()) return nullptr;
    std::unique_ptr<Report> r(queue_.front());
    queue_.pop_front();
    room_.notify_one();
    return r;
  }

  // Valid once next() returned null.
  const CheckStats& stats() const { return stats_; }
  bool finished() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ && queue_.empty();
  }

 private:
  static constexpr std::size_t kMaxQueued = 4096;

  void run() {
    CheckStats st = runner_->run(
        [this](RawRecord& r) {
          {
            std::lock_guard<std::mutex> lock(mutex_);
            if (cancelled_) return false;
          }
          return source_.next(r);
        },
        writer_, [this](std::string_view out, std::string_view) { take(out); });
    std::lock_guard<std::mutex> lock(mutex_);
    stats_ = std::move(st);
    done_ = true;
    ready_.notify_all();
  }

  void take(std::string_view out) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i + sizeof(Report*) <= out.size(); i += sizeof(Report*)) {
      Report* r;
      std::memcpy(&r, out.data() + i, sizeof r);
      if (cancelled_) {
        delete r;
        continue;
      }
      room_.wait(lock, [&] { return queue_.size() < kMaxQueued || cancelled_; });
      if (cancelled_) {
        delete r;
        continue;
      }
      queue_.push_back(r);
      ready_.notify_one();
    }
  }

  std::shared_ptr<Rules> rules_;
  ReportWriter writer_;
  RecordSource source_;
  std::unique_ptr<CheckRunner> runner_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Report*> queue_;
  bool done_ = false, cancelled_ = false;
  CheckStats stats_;
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------
// normalize

std::string normalize_json(std::string_view json, const NormalizeOptions& options) {
  TraceParser parser(options);
  if (!parser.option_error().empty()) raise_option_error(parser.option_error());
  ToolTable tools;
  Trajectory t(&tools);
  std::string out;
  ParseOutcome o;
  {
    py::gil_scoped_release nogil;
    o = parser.parse_value(json, RecordOrigin{"<trace>", 1, 1, 0}, t);
    if (o.ok()) write_normalized_json(t, out);
  }
  if (!o.ok()) raise_trace_error(o.errors);
  return out;
}

// ---------------------------------------------------------------------------------------
// score: one record through the reader of `trajcheck score`

// "file:line:col: error: reason" split back into its parts, for TraceError's attributes.
[[noreturn]] void raise_record_text(std::string text) {
  text = without_newline(std::move(text));
  std::string first = text.substr(0, text.find('\n'));
  std::string file = "<score>", reason = first;
  std::uint64_t line = 0, column = 0;
  std::size_t e = first.find(": error: ");
  if (e != std::string::npos) {
    reason = first.substr(e + 9);
    std::string where = first.substr(0, e);
    std::size_t c2 = where.rfind(':');
    std::size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : where.rfind(':', c2 - 1);
    if (c1 != std::string::npos) {
      file = where.substr(0, c1);
      line = std::stoull(where.substr(c1 + 1, c2 - c1 - 1));
      column = std::stoull(where.substr(c2 + 1));
    }
  }
  raise(types().attr("TraceError")(text, file, line, column, reason));
}

std::string score_json(std::string_view record, const ScoreRunOptions& options) {
  ScoreRecordReader reader(options);
  if (!reader.option_error().empty()) raise_option_error(reader.option_error());
  RawRecord rec;
  rec.text.reserve(record.size() + kRecordPadding);
  rec.text.assign(record.data(), record.size());
  rec.origin = RecordOrigin{"<score>", 1, 1, 0};
  std::string out, err;
  ScoreSummary summary;
  {
    py::gil_scoped_release nogil;
    reader.read(rec, out, err, summary);
  }
  if (summary.rejected > 0) raise_record_text(err);
  return out;
}

}  // namespace
}  // namespace trajcheck::python

namespace trajcheck::python { void init_dask(py::module_& m); }  // dask_support.cpp
PYBIND11_MODULE(_native, m) {
  using namespace trajcheck;
  using namespace trajcheck::python;
  m.doc() = "The C++ core of the trajcheck package (use the `trajcheck` module).";
  init_dask(m);  // trajcheck.dask

  py::class_<Report>(m, "Report", "What checking one trace found (or why its record was rejected).")
      .def_property_readonly("trace_id", [](const Report& r) { return std::string(r.trace.trace_id()); },
                             "The trace id (from the source, else FILE:LINE).")
      .def_property_readonly("passed", &Report::passed,
                             "No rule at or above fail_on is violated (False for a rejected record).")
      .def_property_readonly("rejected", [](const Report& r) { return r.rejected; },
                             "The record could not be read; `error` says why.")
      .def_property_readonly("error", [](const Report& r) -> py::object {
        if (!r.rejected) return py::none();
        return py::str(without_newline(format_record_error(r.error)));
      }, "For a rejected record: `file:line:col: error: reason`, as `check` prints it; else None.")
      .def_property_readonly("record", [](const Report& r) {
        return r.trace.origin.file + ":" + std::to_string(r.trace.origin.line);
      }, "Where the record came from: `file:line`.")
      .def_property_readonly("steps", [](const Report& r) { return r.trace.steps().size(); },
                             "The number of steps of the normalized trace.")
      .def_property_readonly("results", [](const Report& r) { return r.results(false); },
                             "One Result per rule (per binding for parametric violations), in rules order.")
      .def_property_readonly("violations", [](const Report& r) { return r.results(true); },
                             "The violated results.")
      .def_property_readonly("warnings", &Report::warnings, "Located warnings the reader gave for this trace.")
      .def("describe_step", [](const Report& r, std::uint32_t i) { return describe_step(r.trace, i); },
           py::arg("index"), "A step as reports show it: `refund_order {\"order_id\":\"ord_1\"}`.")
      .def("to_json", &Report::jsonl, "This trace's line of `trajcheck check --format jsonl`.")
      .def("__str__", &Report::text)
      .def("__bool__", &Report::passed)
      .def("__repr__", [](const Report& r) {
        if (r.rejected) return "<trajcheck.Report rejected " + r.trace.origin.file + ":" +
                               std::to_string(r.trace.origin.line) + ">";
        std::size_t v = 0;
        for (const auto& res : r.verdict.results) v += res.status == VerdictStatus::violated;
        return "<trajcheck.Report " + std::string(r.trace.trace_id()) + (r.passed() ? " passed" : " failed") +
               ", " + std::to_string(v) + " violation" + (v == 1 ? "" : "s") + ">";
      });

  py::class_<FileRun, std::shared_ptr<FileRun>>(m, "FileRun", "Reports of a corpus, in input order.")
      .def("__iter__", [](std::shared_ptr<FileRun> self) { return self; })
      .def("__next__", [](FileRun& self) {
        std::unique_ptr<Report> r = self.next();
        if (!r) throw py::stop_iteration();
        return r;
      })
      .def_property_readonly("summary", [](FileRun& self) -> py::object {
        if (!self.finished()) return py::none();
        return py::module_::import("json").attr("loads")(self.stats().to_json());
      }, "The run's counters (records, traces, passed, failed, rejected, per-rule) once every report was read; None before.");

  py::class_<Rules, std::shared_ptr<Rules>>(m, "Rules")
      .def("check", [](Rules& self, py::handle trace, const std::string& fail_on) {
        return self.check(trace, fail_on);
      }, py::arg("trace"), py::arg("fail_on"))
      .def("check_file", [](std::shared_ptr<Rules> self, std::vector<std::string> inputs, unsigned jobs,
                            const std::string& fail_on) {
        checked_paths(inputs);
        return std::make_shared<FileRun>(self, std::move(inputs), jobs, fail_on_from(fail_on));
      }, py::arg("inputs"), py::arg("jobs"), py::arg("fail_on"))
      .def_property_readonly("rule_names", &Rules::rule_names)
      .def_property_readonly("files", [](const Rules& self) { return self.rule_set()->files(); });

  py::class_<GuardMonitor>(m, "Monitor", "One running trace under the rules (use Rules.monitor).")
      .def(py::init([](std::shared_ptr<Rules> rules, py::handle context) {
        std::string buffer;
        std::string_view text = context.is_none() ? std::string_view() : trace_text(context, buffer, "context");
        return std::make_unique<GuardMonitor>(std::move(rules), text);
      }), py::arg("rules"), py::arg("context"))
      .def("check", &GuardMonitor::check, py::arg("step"))
      .def("observe", &GuardMonitor::observe, py::arg("step"))
      .def("replay", &GuardMonitor::replay, py::arg("trace"))
      .def("pending", &GuardMonitor::pending)
      .def("finish", &GuardMonitor::finish, py::arg("fail_on"))
      .def_property_readonly("steps", &GuardMonitor::steps);

  m.def("compile_sources", [](std::vector<std::pair<std::string, std::string>> sources, const std::string& catalog,
                              const std::string& input_format, const std::vector<std::string>& aliases,
                              const std::vector<std::string>& error_patterns, const std::vector<std::string>& context) {
    NormalizeOptions reading = reading_options(input_format, aliases, error_patterns, context);
    std::vector<Source> srcs;
    for (auto& [name, text] : sources) srcs.emplace_back(std::move(name), std::move(text));
    CompileOptions copts;
    copts.catalog_override = checked_path(catalog);
    copts.command_line_aliases = reading.aliases;
    return make_rules(compile_rule_set(std::move(srcs), copts), std::move(reading));
  });
  m.def("load_files", [](const std::vector<std::string>& paths, const std::string& catalog,
                         const std::string& input_format, const std::vector<std::string>& aliases,
                         const std::vector<std::string>& error_patterns, const std::vector<std::string>& context) {
    NormalizeOptions reading = reading_options(input_format, aliases, error_patterns, context);
    CompileOptions copts;
    copts.catalog_override = checked_path(catalog);
    copts.command_line_aliases = reading.aliases;
    return make_rules(compile_rule_set(checked_paths(paths), copts), std::move(reading));
  });
  m.def("score", [](py::bytes record, const std::string& selection, bool multiset, double selection_weight,
                    double ordering_weight, std::uint32_t min_order_length, const std::string& tool_args,
                    const std::vector<std::pair<std::string, std::string>>& tool_args_for,
                    const std::string& input_format, const std::vector<std::string>& aliases,
                    const std::vector<std::string>& error_patterns) {
    ScoreRunOptions o;
    o.format = ScoreFormat::jsonl;
    o.quiet = true;
    o.reading = reading_options(input_format, aliases, error_patterns, {});
    if (!parse_selection_metric(selection, &o.scoring.selection))
      raise_option_error("unknown selection '" + selection + "' (jaccard, recall, precision or f1)");
    if (!parse_argument_mode(tool_args, &o.scoring.tool_args))
      raise_option_error("unknown tool_args '" + tool_args + "' (exact, ignore, subset or superset)");
    for (const auto& [tool, mode] : tool_args_for) {
      ArgumentMode m;
      if (!parse_argument_mode(mode, &m))
        raise_option_error("unknown tool_args_for mode '" + mode + "' for " + tool + " (exact, ignore, subset or superset)");
      o.scoring.tool_args_for.emplace_back(tool, m);  // as `--tool-args-for NAME=MODE` passes it
    }
    if (!valid_score_weights(selection_weight, ordering_weight))
      raise_option_error("weights: expected (selection, ordering), two non-negative numbers, not both 0");
    o.scoring.multiset = multiset;
    o.scoring.selection_weight = selection_weight;
    o.scoring.ordering_weight = ordering_weight;
    o.scoring.min_order_length = min_order_length;
    return score_json(std::string(record), o);
  });
  m.def("eval_suite", [](const std::string& suite, const std::vector<std::string>& runs, const std::string& baseline,
                         unsigned jobs, const std::string& input_format, const std::vector<std::string>& aliases,
                         const std::vector<std::string>& error_patterns, const std::string& grader_cache) {
    eval::EvalOptions o;
    o.suite_path = checked_path(suite);
    o.grader_cache = checked_path(grader_cache);
    o.runs = checked_paths(runs);
    o.baseline = checked_path(baseline);
    o.jobs = effective_jobs(jobs);
    o.reading = reading_options(input_format, aliases, error_patterns, {});
    eval::EvalReport report;
    std::vector<eval::EvalProblem> problems;
    bool ok;
    std::string json;
    {
      py::gil_scoped_release nogil;
      ok = eval::run_eval(o, report, problems);
      if (ok) json = eval::report_json(report);
    }
    if (!ok) raise(types().attr("SuiteError")(without_newline(eval::format_problems(problems, false))));
    return json;
  });
  m.def("dumps", [](py::handle value) {
    std::string out;
    append_json_value(out, value.ptr());
    return py::bytes(out);
  }, "JSON text of a Python value, as json.dumps(separators=(',', ':'), ensure_ascii=False) writes it (UTF-8).");
  m.def("normalize", [](py::handle trace, const std::string& input_format, const std::vector<std::string>& aliases,
                        const std::vector<std::string>& error_patterns, const std::vector<std::string>& context) {
    NormalizeOptions o = reading_options(input_format, aliases, error_patterns, context);
    std::string buffer;
    std::string_view json = trace_text(trace, buffer, "trace");
    return normalize_json(json, o);
  });
}
