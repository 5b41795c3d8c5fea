// RegexPrefilter: RE2's FilteredRE2 atoms of one regex, its AND/OR tree tabulated over every
// subset of found atoms at compile time (so matching allocates nothing and walks no tree), and an
// ASCII-lowercasing scan of the text.
#include "compiler/regex_prefilter.hpp"

#include <cstring>

#include <re2/filtered_re2.h>
#include <re2/re2.h>

namespace trajcheck::detail {

std::shared_ptr<const RegexPrefilter> RegexPrefilter::build(const re2::RE2& re) {
  if (!re.ok()) return nullptr;
  re2::FilteredRE2 filter(1);
  int id = 0;
  if (filter.Add(re.pattern(), re.options(), &id) != re2::RE2::NoError) return nullptr;
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  if (atoms.empty() || atoms.size() > kMaxAtoms) return nullptr;
  auto out = std::make_shared<RegexPrefilter>();
  const std::size_t subsets = std::size_t{1} << atoms.size();
  out->pass_.assign((subsets + 63) / 64, 0);
  std::vector<int> found, potential;
  for (std::size_t m = 0; m < subsets; ++m) {
    found.clear();
    for (std::size_t k = 0; k < atoms.size(); ++k)
      if (m >> k & 1) found.push_back(static_cast<int>(k));
    filter.AllPotentials(found, &potential);
    if (!potential.empty()) out->pass_[m / 64] |= std::uint64_t{1} << (m % 64);
  }
  // Passing with no atom found: the tree does not filter this regex (an OR with a branch of no
  // literal), and every text goes to the regex anyway.
  if (out->pass_[0] & 1) return nullptr;
  out->atoms_ = std::move(atoms);
  return out;
}

namespace {
// 16 bytes at a time (GCC and Clang vector extensions: SSE2 on x86-64, NEON on ARM).
using Bytes16 = unsigned char __attribute__((vector_size(16)));

// Lowercases the ASCII letters of 16 bytes into `out`; ORs the bytes into `high`.
inline void lower16(const unsigned char* in, unsigned char* out, Bytes16& high) {
  Bytes16 v;
  std::memcpy(&v, in, 16);
  high |= v;
  const Bytes16 from_a = v - static_cast<unsigned char>('A');
  const auto upper = reinterpret_cast<Bytes16>(from_a < static_cast<unsigned char>(26));  // 0xff or 0
  v += upper & static_cast<unsigned char>(0x20);
  std::memcpy(out, &v, 16);
}
}  // namespace

bool RegexPrefilter::may_match(std::string_view text) const {
  thread_local std::string lower;
  const std::size_t n = text.size();
  if (lower.size() < n + 16) lower.resize(n + 16);
  const auto* in = reinterpret_cast<const unsigned char*>(text.data());
  auto* out = reinterpret_cast<unsigned char*>(lower.data());
  Bytes16 high = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) lower16(in + i, out + i, high);
  if (i < n) {  // the tail, through a zeroed block (zeros are neither letters nor high)
    unsigned char tail[16] = {};
    std::memcpy(tail, in + i, n - i);
    lower16(tail, out + i, high);
  }
  std::uint64_t words[2];
  std::memcpy(words, &high, 16);
  if ((words[0] | words[1]) & 0x8080808080808080u) return true;
  const std::string_view hay(lower.data(), n);
  std::size_t m = 0;
  for (std::size_t k = 0; k < atoms_.size(); ++k)
    if (hay.find(atoms_[k]) != std::string_view::npos) m |= std::size_t{1} << k;
  return (pass_[m / 64] >> (m % 64)) & 1;
}

}  // namespace trajcheck::detail
