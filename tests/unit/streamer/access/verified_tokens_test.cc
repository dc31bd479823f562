// a verified token is looked up, not verified again, until it expires; the cache is
// bounded (least recently used out) and forgets everything when the keys change.
#include "streamer/access/verified_tokens.h"

#include <catch2/catch.hpp>
#include <string>

// A namespace of its own: unit tests compile in batches.
namespace meshwork::streamer::verified_tokens_test {

crypto::JwtClaims Claims(int64_t exp, std::string sub = "alice") {
  crypto::JwtClaims c;
  c.exp = exp;
  c.sub = std::move(sub);
  return c;
}

TEST_CASE("A-5 a verified token is found until exp plus the skew, then forgotten") {
  VerifiedTokens cache(8);
  cache.Insert("token-a", Claims(1000));
  CHECK_FALSE((cache.Find("token-b", 900) != nullptr));
  auto found = cache.Find("token-a", 900);
  REQUIRE(found != nullptr);
  CHECK(found->sub == "alice");
  CHECK((cache.Find("token-a", 1000 + crypto::kJwtSkewSeconds - 1) != nullptr));
  CHECK_FALSE((cache.Find("token-a", 1000 + crypto::kJwtSkewSeconds) != nullptr));
  CHECK(cache.size() == 0);  // an expired entry leaves at once
  CHECK(cache.hits() == 2);
}

TEST_CASE("A-5 the cache keeps at most its capacity, the least recently used out") {
  VerifiedTokens cache(2);
  cache.Insert("a", Claims(1000, "a"));
  cache.Insert("b", Claims(1000, "b"));
  CHECK((cache.Find("a", 0) != nullptr));  // a is now the most recent
  cache.Insert("c", Claims(1000, "c"));    // b goes
  CHECK(cache.size() == 2);
  CHECK((cache.Find("a", 0) != nullptr));
  CHECK_FALSE((cache.Find("b", 0) != nullptr));
  CHECK((cache.Find("c", 0) != nullptr));
  cache.Insert("c", Claims(2000, "c2"));  // the same token again: replaced, not added
  CHECK(cache.size() == 2);
  CHECK(cache.Find("c", 1500)->sub == "c2");
  cache.Clear();
  CHECK(cache.size() == 0);
  CHECK_FALSE((cache.Find("a", 0) != nullptr));
}

}  // namespace meshwork::streamer::verified_tokens_test
