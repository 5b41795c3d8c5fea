// The literal prefilter in front of `matches`: it may only skip texts the regex cannot match,
// so a checker with it gives RE2's own verdict on every text (random texts of case variants,
// words inside words, and Unicode letters that RE2 folds or lowercases onto ASCII ones).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "compiler/regex_prefilter.hpp"
#include "reference/builders.hpp"

using namespace trajcheck;
using namespace trajcheck::testing;
using detail::RegexPrefilter;

namespace {

std::shared_ptr<const RegexPrefilter> prefilter_of(const std::string& pattern) {
  RE2::Options o;
  o.set_log_errors(false);
  RE2 re(pattern, o);
  REQUIRE(re.ok());
  return RegexPrefilter::build(re);
}

const std::vector<std::string> kPatterns = {
    R"((?i)\byes\b)",     "yes",           R"((?i)yes|no\b)",     R"((?i)(order|refund).*cancel)",
    "(?i)k",              R"(\x{212A})",   "(?i)\u017F",          "(?i)stra\u00DFe",
    "(?i)\u00E9t\u00E9",  "\u00D6+",       "^h",                  "(?i)ab[cd]e",
    "(?i)\\bkelvin\\b",   "(?i)s{2}",      "(?i)yes(?-i)NO",      "(?i)(?:gift|store)_card_[0-9]+",
    "[a-z]+",             "(?i)y.s",       "(?i)\u03A3\u03BF\u03C6",  "(?i)\\Qa.b\\E",
};

// Pieces texts are made of: the atoms' words in every case, words that contain them, letters
// RE2 relates to ASCII ones (U+212A KELVIN SIGN, U+017F LONG S, U+0130), other Unicode letters.
const std::vector<std::string> kPieces = {
    "yes",   "YES",     "Yes",        "yEs",      "eyes",       "yesterday", "no",        "NO",
    "k",     "K",       "\u212A",     "kelvin",   "\u212Aelvin", "s",        "S",         "\u017F",
    "ss",    "SS",      "stra\u00DFe", "STRASSE", "\u00DF",     "\u1E9E",    "\u00E9t\u00E9", "\u00C9T\u00C9",
    "\u00D6", "\u00F6", "\u0130",     "i",        "h",          "hello",     "order",     "ORDER",
    "refund", "Cancel", "abce",       "ABDE",     "a.b",        "axb",       "gift_card_12", "GIFT_CARD_7",
    "\u03A3\u03BF\u03C6", "\u03C3\u03BF\u03C6", " ", "!", "\n", "_", "0", "-",
};

std::string random_text(std::mt19937_64& rng) {
  std::string s;
  const int n = static_cast<int>(rng() % 7);
  for (int i = 0; i < n; ++i) {
    if (rng() % 4 == 0) {
      s += static_cast<char>(0x20 + rng() % 95);  // any printable ASCII byte
    } else {
      s += kPieces[rng() % kPieces.size()];
    }
  }
  return s;
}

}  // namespace

TEST_CASE("a case-insensitive word has its lowercase literal as the prefilter") {
  auto f = prefilter_of(R"((?i)\byes\b)");
  REQUIRE(f != nullptr);
  CHECK(f->atoms() == std::vector<std::string>{"yes"});
  CHECK_FALSE(f->may_match("no thanks"));
  CHECK_FALSE(f->may_match(""));
  CHECK(f->may_match("YES please"));
  CHECK(f->may_match("eyes"));          // the literal is there; the regex decides
  CHECK(f->may_match("n\u00E3o, yes"));  // a byte above 0x7f: always the regex
  auto both = prefilter_of(R"((?i)(order|refund).*cancel)");
  REQUIRE(both != nullptr);
  CHECK_FALSE(both->may_match("ORDER it"));
  CHECK_FALSE(both->may_match("cancel it"));
  CHECK(both->may_match("Refund, then CANCEL"));
}

TEST_CASE("regexes that need no literal have no prefilter") {
  CHECK(prefilter_of(".") == nullptr);
  CHECK(prefilter_of(R"(^\w+$)") == nullptr);
  CHECK(prefilter_of("") == nullptr);
  CHECK(prefilter_of("yes|.") == nullptr);
  CHECK(prefilter_of("[a-z]+") == nullptr);
}

TEST_CASE("property: the prefilter never rejects a text the regex matches") {
  std::mt19937_64 rng(44);
  int rejected = 0, prefiltered = 0;
  for (const std::string& pattern : kPatterns) {
    RE2 re(pattern);
    REQUIRE(re.ok());
    auto f = RegexPrefilter::build(re);
    prefiltered += f != nullptr;
    for (int i = 0; i < 3000; ++i) {
      const std::string text = random_text(rng);
      const bool matches = RE2::PartialMatch(text, re);
      if (f && !f->may_match(text)) {
        ++rejected;
        INFO("pattern /" << pattern << "/ text \"" << text << "\"");
        CHECK_FALSE(matches);
      }
    }
  }
  // The test means something only if most patterns have a prefilter and it skips texts.
  CHECK(prefiltered >= static_cast<int>(kPatterns.size()) - 3);
  CHECK(rejected > 10000);
}

TEST_CASE("property: the checker's `matches` verdicts are RE2's own, prefilter or not") {
  std::mt19937_64 rng(4444);
  for (const std::string& pattern : kPatterns) {
    IrBuilder b;
    b.rule(IrBuilder::st(ir::StatementKind::forbid, b.where(b.any(), b.matches("arguments.q", pattern))));
    IrBuilder bm;  // the same regex on a message's own text (a step field, not JSON)
    bm.rule(IrBuilder::st(ir::StatementKind::forbid,
                          bm.where(bm.type(StepType::user_message), bm.matches("content", pattern))));
    auto on_args = b.compile();
    auto on_content = bm.compile();
    REQUIRE(on_args != nullptr);
    REQUIRE(on_content != nullptr);
    RE2 re(pattern);
    for (int i = 0; i < 400; ++i) {
      const std::string text = random_text(rng);
      const bool expected = RE2::PartialMatch(text, re);
      StepsBuilder t;
      t.call("tool", nlohmann::json{{"q", text}}.dump());
      t.message(StepType::user_message, text);
      INFO("pattern /" << pattern << "/ text \"" << text << "\"");
      CHECK((run(on_args, t.t)[0].status == VerdictStatus::violated) == expected);
      CHECK((run(on_content, t.t)[0].status == VerdictStatus::violated) == expected);
    }
  }
}
