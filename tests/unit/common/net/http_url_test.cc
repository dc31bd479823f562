// the auth backend's URL, parsed strictly (central refuses what a node could not call).
#include "common/net/http_url.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// A namespace of its own: unit tests compile in batches.
namespace meshwork::net::http_url_test {

TEST_CASE("A-6 http URLs: host, port and target, IPv6 bracketed, defaults 80 and /") {
  auto plain = ParseHttpUrl("http://auth.example.net");
  REQUIRE(plain.ok());
  CHECK(plain->host == "auth.example.net");
  CHECK(plain->port == 80);
  CHECK(plain->target == "/");
  auto full = ParseHttpUrl("http://[::1]:8080/v1/check?site=a");
  REQUIRE(full.ok());
  CHECK(full->host == "[::1]");
  CHECK(full->port == 8080);
  CHECK(full->target == "/v1/check?site=a");
  CHECK_FALSE(full->tls);
  auto secure = ParseHttpUrl("https://auth.example.net/check");
  REQUIRE(secure.ok());
  CHECK(secure->tls);
  CHECK(secure->port == 443);
  CHECK(secure->target == "/check");
  auto query = ParseHttpUrl("http://127.0.0.1:9?x=1");
  REQUIRE(query.ok());
  CHECK(query->target == "/?x=1");
}

TEST_CASE("A-6 http URLs: what a node could not call is refused") {
  for (const std::string& bad :
       std::vector<std::string>{"",
                                "auth.example.net/x",
                                "https://",
                                "ftp://a/",
                                "http://",
                                "http:///x",
                                "http://a:/",
                                "http://a:0/",
                                "http://a:65536/",
                                "http://a:80x/",
                                "http://u:p@a/",
                                "http://a b/",
                                "http://a/b c",
                                "http://a/#frag",
                                "http://[::1/",
                                "http://[1.2.3.4]/",
                                "http://[::1]x/",
                                "http://a_b/",
                                "http://a/\x7f",
                                std::string("http://") + std::string(2050, 'a')}) {
    INFO(bad);
    CHECK_FALSE(ParseHttpUrl(bad).ok());
  }
}

}  // namespace meshwork::net::http_url_test
