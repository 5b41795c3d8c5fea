// did_you_mean: the suggestion behind "did you mean" for unknown tool names (E202, W008).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "util/suggest.hpp"

using trajcheck::detail::did_you_mean;

TEST_CASE("did_you_mean: one missing letter, a swap, case and `-` for `_`") {
  const std::vector<std::string> tools{"book_flight", "cancel_booking", "search_flights"};
  CHECK(did_you_mean("cancel_bookng", tools) == "cancel_booking");
  CHECK(did_you_mean("cancle_booking", tools) == "cancel_booking");  // adjacent swap: 1 edit
  CHECK(did_you_mean("Cancel-Booking", tools) == "cancel_booking");  // folded: distance 0
  CHECK(did_you_mean("search_flight", tools) == "search_flights");
  CHECK(did_you_mean("bok_flihgt", tools) == "book_flight");          // 2 edits in 10 letters
}

TEST_CASE("did_you_mean: nothing close, nothing suggested") {
  const std::vector<std::string> tools{"book_flight", "cancel_booking"};
  CHECK(did_you_mean("delete_user", tools).empty());
  CHECK(did_you_mean("refund", tools).empty());
  CHECK(did_you_mean("", tools).empty());
  CHECK(did_you_mean("cancel_booking", tools).empty());  // the name itself is no suggestion
  CHECK(did_you_mean("cancel_booking", {}).empty());
  // Short names: one edit at most, and never as many edits as the name has letters.
  CHECK(did_you_mean("ab", {"xy"}).empty());
  CHECK(did_you_mean("ab", {"a"}).empty());
  CHECK(did_you_mean("get", {"gets"}) == "gets");
  CHECK(did_you_mean("get", {"gxts"}).empty());
}

TEST_CASE("did_you_mean: the closest candidate wins, ties go to the first") {
  CHECK(did_you_mean("order_gets", {"order_list", "order_get"}) == "order_get");
  CHECK(did_you_mean("order_gex", {"order_get", "order_gen"}) == "order_get");
  CHECK(did_you_mean("order_gex", {"order_gen", "order_get"}) == "order_gen");
}

TEST_CASE("did_you_mean: long inputs are refused, not slow") {
  std::string big(10000, 'a');
  CHECK(did_you_mean(big, {big + "b"}).empty());
  CHECK(did_you_mean("abc", {big}).empty());
}
