#include <catch2/catch.hpp>
#include <string>

#include "common/http/types.h"

namespace meshwork::http::request_context_test {
namespace {

// A context whose query (a view, as the server's is into the request target) stays alive
// with it.
struct WithQuery : RequestContext {
  explicit WithQuery(std::string text) : owned(std::move(text)) { query = owned; }
  WithQuery(const WithQuery&) = delete;
  std::string owned;
};

TEST_CASE("A-3 a query value is read whole, and decoded only where it is encoded") {
  const std::string token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl-_";
  WithQuery ctx("_HLS_msn=12&token=" + token + "&sid=abc");
  CHECK(ctx.QueryParam("token") == token);
  CHECK(ctx.QueryParam("_HLS_msn") == "12");
  CHECK(ctx.QueryParam("sid") == "abc");
  CHECK_FALSE(ctx.QueryParam("tok").has_value());
  CHECK_FALSE(ctx.QueryParam("").has_value());

  // Percent-encoding (either case) and '+' are decoded; a '%' not followed by two hex digits
  // is kept as it is.
  WithQuery encoded("a=x%2Fy%2fz&b=one+two&c=50%&d=%zz1&e=%4");
  CHECK(encoded.QueryParam("a") == "x/y/z");
  CHECK(encoded.QueryParam("b") == "one two");
  CHECK(encoded.QueryParam("c") == "50%");
  CHECK(encoded.QueryParam("d") == "%zz1");
  CHECK(encoded.QueryParam("e") == "%4");

  // A key without '=' has an empty value; an empty query has none.
  CHECK(WithQuery("dvr&x=1").QueryParam("dvr") == "");
  CHECK_FALSE(WithQuery("").QueryParam("x").has_value());
  CHECK(WithQuery("x=1&x=2").QueryParam("x") == "1");

  // Without a copy: a view into the query itself, or into the storage when decoded.
  std::string storage;
  auto view = ctx.QueryParam("token", &storage);
  REQUIRE(view.has_value());
  CHECK(*view == token);
  CHECK(view->data() >= ctx.query.data());
  CHECK(view->data() < ctx.query.data() + ctx.query.size());
  CHECK(storage.empty());
  auto decoded = encoded.QueryParam("b", &storage);
  REQUIRE(decoded.has_value());
  CHECK(*decoded == "one two");
  CHECK(decoded->data() == storage.data());
  CHECK_FALSE(encoded.QueryParam("zz", &storage).has_value());
}

}  // namespace
}  // namespace meshwork::http::request_context_test
