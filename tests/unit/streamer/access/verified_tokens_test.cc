// a verified token is looked up, not verified again, until it expires; the cache is
// bounded (least recently used out) and forgets everything when the keys change.
#include "streamer/access/verified_tokens.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

// A namespace of its own: unit tests compile in batches.
namespace meshwork::streamer::verified_tokens_test {

// The key set the tokens below were verified under.
const std::shared_ptr<const crypto::JwtKeySet>& Keys() {
  static const auto keys = std::make_shared<const crypto::JwtKeySet>();
  return keys;
}

crypto::JwtClaims Claims(int64_t exp, std::string sub = "alice") {
  crypto::JwtClaims c;
  c.exp = exp;
  c.sub = std::move(sub);
  return c;
}

TEST_CASE("A-5 a verified token is found until exp plus the skew, then forgotten") {
  VerifiedTokens cache(8);
  cache.Insert("token-a", Claims(1000), Keys());
  CHECK_FALSE((cache.Find("token-b", 900, Keys().get()) != nullptr));
  auto found = cache.Find("token-a", 900, Keys().get());
  REQUIRE(found != nullptr);
  CHECK(found->sub == "alice");
  CHECK((cache.Find("token-a", 1000 + crypto::kJwtSkewSeconds - 1, Keys().get()) != nullptr));
  CHECK_FALSE((cache.Find("token-a", 1000 + crypto::kJwtSkewSeconds, Keys().get()) != nullptr));
  CHECK(cache.size() == 0);  // an expired entry leaves at once
  CHECK(cache.hits() == 2);
}

TEST_CASE("A-5 the cache keeps at most its capacity, the least recently used out") {
  VerifiedTokens cache(2);
  cache.Insert("a", Claims(1000, "a"), Keys());
  cache.Insert("b", Claims(1000, "b"), Keys());
  CHECK((cache.Find("a", 0, Keys().get()) != nullptr));  // a is now the most recent
  cache.Insert("c", Claims(1000, "c"), Keys());          // b goes
  CHECK(cache.size() == 2);
  CHECK((cache.Find("a", 0, Keys().get()) != nullptr));
  CHECK_FALSE((cache.Find("b", 0, Keys().get()) != nullptr));
  CHECK((cache.Find("c", 0, Keys().get()) != nullptr));
  cache.Insert("c", Claims(2000, "c2"), Keys());  // the same token again: replaced, not added
  CHECK(cache.size() == 2);
  CHECK(cache.Find("c", 1500, Keys().get())->sub == "c2");
  cache.Clear();
  CHECK(cache.size() == 0);
  CHECK_FALSE((cache.Find("a", 0, Keys().get()) != nullptr));
}

TEST_CASE("A-4 A-5 a token verified under a key set that was replaced is never found") {
  VerifiedTokens cache(8);
  auto rotated = std::make_shared<const crypto::JwtKeySet>();
  // A check that began under the old set inserts after the rotation cleared the cache.
  cache.Clear();
  cache.Insert("token-a", Claims(1000), Keys());
  CHECK((cache.Find("token-a", 900, Keys().get()) != nullptr));
  CHECK_FALSE((cache.Find("token-a", 900, rotated.get()) != nullptr));
  CHECK(cache.size() == 0);  // an entry of a replaced set is let go when met
  // Verified again under the new set: found there, not under the old one.
  cache.Insert("token-a", Claims(1000), rotated);
  CHECK((cache.Find("token-a", 900, rotated.get()) != nullptr));
  CHECK_FALSE((cache.Find("token-a", 900, Keys().get()) != nullptr));
}

}  // namespace meshwork::streamer::verified_tokens_test
