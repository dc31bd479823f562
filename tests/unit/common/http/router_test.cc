#include "common/http/router.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

namespace meshwork::http {
namespace {

// A handler that records its name in `*hit` when called.
Handler Tag(std::string* hit, std::string name) {
  return [hit, name](RequestContext&, Responder) { *hit = name; };
}

// Runs the matched handler and returns the tag it recorded.
std::string Call(const Router::Match& match, std::string* hit) {
  REQUIRE(match.result == Router::MatchResult::kFound);
  REQUIRE(match.handler != nullptr);
  hit->clear();
  RequestContext ctx;
  (*match.handler)(ctx, Responder(nullptr));
  return *hit;
}

using Params = std::vector<std::string>;

TEST_CASE("Router: {name} captures one path segment") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/central/api-v4/streamers/{id}", Tag(&hit, "streamer"));
  router.Add({Verb::get}, "/central/api-v4/zones/{name}/nodes/{node}", Tag(&hit, "node"));

  auto m = router.Find(Verb::get, "/central/api-v4/streamers/edge-1");
  CHECK(Call(m, &hit) == "streamer");
  CHECK(m.params == Params{"edge-1"});

  m = router.Find(Verb::get, "/central/api-v4/zones/spb/nodes/edge-2");
  CHECK(Call(m, &hit) == "node");
  CHECK(m.params == Params{"spb", "edge-2"});

  // A capture needs exactly one non-empty segment.
  CHECK(router.Find(Verb::get, "/central/api-v4/streamers/").result ==
        Router::MatchResult::kNoPath);
  CHECK(router.Find(Verb::get, "/central/api-v4/streamers").result == Router::MatchResult::kNoPath);
  CHECK(router.Find(Verb::get, "/central/api-v4/streamers/a/b").result ==
        Router::MatchResult::kNoPath);
  // Literal segments must match exactly.
  CHECK(router.Find(Verb::get, "/central/api-v4/streamer/edge-1").result ==
        Router::MatchResult::kNoPath);
}

TEST_CASE("Router: a final {name...} captures the rest of the path") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/static/{path...}", Tag(&hit, "static"));

  auto m = router.Find(Verb::get, "/static/css/site.css");
  CHECK(Call(m, &hit) == "static");
  CHECK(m.params == Params{"css/site.css"});

  m = router.Find(Verb::get, "/static/index.html");
  CHECK(Call(m, &hit) == "static");
  CHECK(m.params == Params{"index.html"});

  // One or more segments, none of them empty.
  CHECK(router.Find(Verb::get, "/static").result == Router::MatchResult::kNoPath);
  CHECK(router.Find(Verb::get, "/static/").result == Router::MatchResult::kNoPath);
  CHECK(router.Find(Verb::get, "/static/a//b").result == Router::MatchResult::kNoPath);
  CHECK(router.Find(Verb::get, "/static/a/").result == Router::MatchResult::kNoPath);
}

TEST_CASE("Router: captures and rest combine") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/live/{stream}/{file...}", Tag(&hit, "live"));
  auto m = router.Find(Verb::get, "/live/news/720p/index.m3u8");
  CHECK(Call(m, &hit) == "live");
  CHECK(m.params == Params{"news", "720p/index.m3u8"});
}

TEST_CASE("Router: an unknown path is kNoPath and a known path with another verb is kNoMethod") {
  std::string hit;
  Router router;
  router.Add({Verb::get, Verb::put, Verb::patch}, "/zones/{name}", Tag(&hit, "zone"));
  router.Add({Verb::delete_}, "/zones/{name}", Tag(&hit, "zone-delete"));
  router.Add({Verb::get}, "/zones", Tag(&hit, "zones"));

  auto none = router.Find(Verb::get, "/nowhere");
  CHECK(none.result == Router::MatchResult::kNoPath);
  CHECK(none.handler == nullptr);
  CHECK(none.allow.empty());

  auto no_method = router.Find(Verb::post, "/zones/spb");
  CHECK(no_method.result == Router::MatchResult::kNoMethod);
  CHECK(no_method.handler == nullptr);
  CHECK(no_method.allow == "GET, PUT, PATCH, DELETE");

  auto list = router.Find(Verb::delete_, "/zones");
  CHECK(list.result == Router::MatchResult::kNoMethod);
  CHECK(list.allow == "GET");

  CHECK(Call(router.Find(Verb::delete_, "/zones/spb"), &hit) == "zone-delete");
  CHECK(Call(router.Find(Verb::patch, "/zones/spb"), &hit) == "zone");
}

TEST_CASE("Router: HEAD is accepted wherever GET is") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/metrics", Tag(&hit, "metrics"));
  router.Add({Verb::post}, "/publish", Tag(&hit, "publish"));

  CHECK(Call(router.Find(Verb::head, "/metrics"), &hit) == "metrics");
  auto head_post = router.Find(Verb::head, "/publish");
  CHECK(head_post.result == Router::MatchResult::kNoMethod);
  CHECK(head_post.allow == "POST");
}

TEST_CASE("Router: the first matching route wins") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/streams/special", Tag(&hit, "special"));
  router.Add({Verb::get}, "/streams/{name}", Tag(&hit, "generic"));
  router.Add({Verb::get}, "/streams/{name}", Tag(&hit, "shadowed"));
  router.Add({Verb::get}, "/files/{rest...}", Tag(&hit, "files-rest"));
  router.Add({Verb::get}, "/files/{name}", Tag(&hit, "files-one"));

  auto special = router.Find(Verb::get, "/streams/special");
  CHECK(Call(special, &hit) == "special");
  CHECK(special.params.empty());
  auto generic = router.Find(Verb::get, "/streams/other");
  CHECK(Call(generic, &hit) == "generic");
  CHECK(generic.params == Params{"other"});
  CHECK(Call(router.Find(Verb::get, "/files/a"), &hit) == "files-rest");
}

TEST_CASE("P-2 Router: routes starting with a capture and with a literal keep their added order") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/api/one", Tag(&hit, "api-one"));
  router.Add({Verb::get}, "/{first}/one", Tag(&hit, "capture-one"));
  router.Add({Verb::get}, "/api/{name}", Tag(&hit, "api-name"));
  router.Add({Verb::post}, "/other/{name}", Tag(&hit, "other-post"));
  router.Add({Verb::get}, "/{path...}", Tag(&hit, "catch-all"));
  router.Add({Verb::get}, "/api/two", Tag(&hit, "shadowed"));

  CHECK(Call(router.Find(Verb::get, "/api/one"), &hit) == "api-one");
  CHECK(Call(router.Find(Verb::get, "/zzz/one"), &hit) == "capture-one");
  auto two = router.Find(Verb::get, "/api/two");  // the capture-first catch-all came first
  CHECK(Call(two, &hit) == "api-name");
  CHECK(two.params == Params{"two"});
  CHECK(Call(router.Find(Verb::get, "/api/two/three"), &hit) == "catch-all");
  CHECK(Call(router.Find(Verb::get, "/other/x"), &hit) == "catch-all");
  auto post = router.Find(Verb::post, "/other/x");
  CHECK(Call(post, &hit) == "other-post");
  auto put = router.Find(Verb::put, "/other/x");  // the Allow list gathers both kinds
  CHECK(put.result == Router::MatchResult::kNoMethod);
  CHECK(put.allow == "POST, GET");
}

TEST_CASE("Router: a later route with the method is found after an earlier one without it") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/config", Tag(&hit, "get"));
  router.Add({Verb::patch}, "/config", Tag(&hit, "patch"));
  CHECK(Call(router.Find(Verb::patch, "/config"), &hit) == "patch");
  CHECK(Call(router.Find(Verb::get, "/config"), &hit) == "get");
  auto put = router.Find(Verb::put, "/config");
  CHECK(put.result == Router::MatchResult::kNoMethod);
  CHECK(put.allow == "GET, PATCH");
}

TEST_CASE("Router: the root path") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/", Tag(&hit, "root"));
  CHECK(Call(router.Find(Verb::get, "/"), &hit) == "root");
  CHECK(router.Find(Verb::get, "/x").result == Router::MatchResult::kNoPath);
}

TEST_CASE("P-5 Router: a reused Match holds only the last lookup's result") {
  std::string hit;
  Router router;
  router.Add({Verb::get}, "/{stream}/{rest...}", Tag(&hit, "media"));
  router.Add({Verb::put}, "/ingest/{id}", Tag(&hit, "ingest"));
  router.AddStreaming({Verb::post}, "/upload/{id}",
                      [](RequestContext&, std::shared_ptr<BodyReader>, Responder) {});
  Router::Match m;
  router.Find(Verb::get, "/live/v1/12.ts", m);
  CHECK(Call(m, &hit) == "media");
  CHECK(m.params == Params{"live", "v1/12.ts"});
  CHECK(m.streaming == nullptr);

  router.Find(Verb::get, "/", m);
  CHECK(m.result == Router::MatchResult::kNoPath);
  CHECK(m.handler == nullptr);
  CHECK(m.params.empty());
  CHECK(m.allow.empty());

  router.Find(Verb::get, "/ingest/7", m);  // also /{stream}/{rest...}: found there
  CHECK(Call(m, &hit) == "media");
  router.Find(Verb::delete_, "/ingest/7", m);
  CHECK(m.result == Router::MatchResult::kNoMethod);
  CHECK(m.handler == nullptr);
  CHECK(m.params.empty());
  CHECK(m.allow == "GET, PUT");

  router.Find(Verb::post, "/upload/9", m);
  CHECK(m.result == Router::MatchResult::kFound);
  CHECK(m.handler == nullptr);
  CHECK(m.streaming != nullptr);
  CHECK(m.allow.empty());
  CHECK(m.params == Params{"9"});

  router.Find(Verb::get, "/a/b", m);
  CHECK(Call(m, &hit) == "media");
  CHECK(m.streaming == nullptr);
  CHECK(m.params == Params{"a", "b"});
}

TEST_CASE("P-5 Router: a reused Match assigns captures over the strings it holds") {
  Router router;
  router.Add({Verb::get}, "/{path...}", [](RequestContext&, Responder) {});
  Router::Match match;
  router.Find(Verb::get, "/live/v1/1234567890123456789.ts", match);
  REQUIRE(match.result == Router::MatchResult::kFound);
  REQUIRE(match.params == std::vector<std::string>{"live/v1/1234567890123456789.ts"});
  const char* storage = match.params[0].data();  // longer than the small-string buffer
  router.Find(Verb::get, "/live/v1/1234567890123456790.ts", match);
  REQUIRE(match.params == std::vector<std::string>{"live/v1/1234567890123456790.ts"});
  CHECK(match.params[0].data() == storage);      // no new allocation for the same length
  router.Find(Verb::get, "/live//x.ts", match);  // an empty segment never matches
  CHECK(match.result == Router::MatchResult::kNoPath);
  CHECK(match.params.empty());
}

}  // namespace
}  // namespace meshwork::http
