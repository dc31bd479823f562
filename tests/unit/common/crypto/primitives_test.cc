#include "common/crypto/primitives.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/crypto/base64url.h"

namespace meshwork::crypto {
namespace {

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

TEST_CASE("O-7 base64url round trips every byte value and every length") {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); ++n) {
    std::string bytes = all.substr(all.size() - n);  // ends with 0xff, ..., 0xfe, 0xff
    std::string text = Base64UrlEncode(bytes);
    INFO(n);
    CHECK(text.find_first_of("+/=") == std::string::npos);
    CHECK(text.size() == (n * 4 + 2) / 3);
    std::optional<std::string> back = Base64UrlDecode(text);
    REQUIRE(back.has_value());
    CHECK(*back == bytes);
    // The padded spelling decodes to the same bytes.
    std::string padded = text + std::string((4 - text.size() % 4) % 4, '=');
    CHECK(Base64UrlDecode(padded) == bytes);
  }
}

TEST_CASE("O-7 base64url matches RFC 4648 test vectors with the URL-safe alphabet") {
  CHECK(Base64UrlEncode("") == "");
  CHECK(Base64UrlEncode("f") == "Zg");
  CHECK(Base64UrlEncode("fo") == "Zm8");
  CHECK(Base64UrlEncode("foo") == "Zm9v");
  CHECK(Base64UrlEncode("foob") == "Zm9vYg");
  CHECK(Base64UrlEncode("fooba") == "Zm9vYmE");
  CHECK(Base64UrlEncode("foobar") == "Zm9vYmFy");
  CHECK(Base64UrlEncode("\xfb\xff\xbf") == "-_-_");
  CHECK(Base64UrlDecode("Zm9vYg==") == std::string("foob"));
  CHECK(Base64UrlDecode("Zm9vYmE=") == std::string("fooba"));
  CHECK(Base64UrlDecode("-_-_") == std::string("\xfb\xff\xbf"));
  CHECK(Base64UrlDecode("") == std::string());
}

TEST_CASE("R-3 base64url rejects bad characters, lengths and padding") {
  const std::vector<std::string_view> bads = {
      "Z",        "Zm9vY", "+w",    "/w",   "Zm 9v",  "Zm9v\n",
      "Zg=",      "Zg===", "Zm8==", "Z===", "====",   "=",
      "Zg==Zg==", "Zm=v",  "Zh",    "Zm9",  "Zm9vYh", std::string_view("Zm\0v", 4)};
  for (std::string_view bad : bads) {
    INFO(std::string(bad));
    CHECK_FALSE(Base64UrlDecode(bad).has_value());
  }
}

TEST_CASE("O-7 HMAC-SHA256 matches RFC 4231 test cases") {
  // Test case 2.
  CHECK(Hex(HmacSha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 1.
  CHECK(Hex(HmacSha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 6: a key longer than the block size.
  CHECK(Hex(HmacSha256(std::string(131, '\xaa'),
                       "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(HmacSha256("", "").size() == 32);
}

TEST_CASE("O-7 viewing key material comes from the CSPRNG") {
  CHECK(RandomBytes(0).empty());
  CHECK(RandomBytes(32).size() == 32);
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) seen.insert(RandomBytes(32));
  CHECK(seen.size() == 100);
  CHECK(RandomBytes(100000).size() == 100000);
}

TEST_CASE("O-7 constant-time comparison compares contents and lengths") {
  CHECK(ConstantTimeEquals("", ""));
  CHECK(ConstantTimeEquals("abc", "abc"));
  CHECK_FALSE(ConstantTimeEquals("abc", "abd"));
  CHECK_FALSE(ConstantTimeEquals("abc", "ab"));
  CHECK_FALSE(ConstantTimeEquals("", "a"));
  CHECK(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  CHECK_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
}

}  // namespace
}  // namespace meshwork::crypto
