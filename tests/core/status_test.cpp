#include <doctest/doctest.h>

#include "core/status.h"

using namespace rackchaos;

namespace {
Result<int> Half(int x) {
  if (x % 2) return Status::Invalid("odd: " + std::to_string(x));
  return x / 2;
}
Result<int> Quarter(int x) {
  RC_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}
}  // namespace

TEST_CASE("Result carries a value or an error, and the macros propagate it") {
  CHECK(Quarter(8).value() == 2);
  auto r = Quarter(6);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "odd: 3");
  CHECK(r.status().WithContext("quartering").ToString() == "invalid argument: quartering: odd: 3");
  CHECK(Status::Ok().ToString() == "ok");
}
