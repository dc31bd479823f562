// Z-22: a node asks central's Route for what its own view cannot answer — one ask per
// (stream, viewer, scheme) however many requests wait, answers kept a second, asks bounded.
#include "streamer/delivery/central_redirect.h"

#include <catch2/catch.hpp>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/net/ip_address.h"

namespace meshwork::streamer {
namespace {

class KeptAnswer final : public http::Responder::Sink {
 public:
  explicit KeptAnswer(std::optional<http::Response>* out) : out_(out) {}
  void Complete(http::Response response) override { *out_ = std::move(response); }

 private:
  std::optional<http::Response>* out_;
};

struct RedirectFixture {
  FakeClock clock;
  std::vector<std::pair<v1::RouteRequest, CentralRedirect::Answer>> asks;  // central, by hand
  // Before the redirect: a request still waiting when it goes is answered (500) on the way.
  std::vector<std::unique_ptr<std::optional<http::Response>>> answers;
  std::deque<std::string> query_keep;  // the queries the contexts point into
  CentralRedirect redirect{CentralRedirect::Options{std::chrono::milliseconds(1000), 2, 100},
                           "self",
                           [this](v1::RouteRequest request, CentralRedirect::Answer done) {
                             asks.emplace_back(std::move(request), std::move(done));
                           },
                           clock, nullptr};

  // Sends a viewer request; returns the slot its answer lands in.
  std::optional<http::Response>& Ask(const std::string& stream, const std::string& client,
                                     std::string query = "") {
    answers.push_back(std::make_unique<std::optional<http::Response>>());
    http::RequestContext ctx;
    ctx.client = *net::IpAddress::Parse(client);
    ctx.scheme = "http";
    ctx.query = query_keep.emplace_back(std::move(query));
    redirect.Redirect(ctx, stream, "index.m3u8",
                      http::Responder(std::make_shared<KeptAnswer>(answers.back().get())));
    return *answers.back();
  }
};

v1::RouteResponse Chosen(const std::string& id) {
  v1::RouteResponse r;
  r.mutable_selected()->set_id(id);
  r.mutable_selected()->set_url("http://" + id + ".example.net:8081");
  return r;
}

TEST_CASE("Z-22 concurrent viewers of one stream share one ask, the answer kept a second") {
  RedirectFixture f;
  auto& first = f.Ask("ch1", "10.0.0.1", "token=a");
  auto& second = f.Ask("ch1", "10.0.0.1", "token=b");
  REQUIRE(f.asks.size() == 1);
  CHECK(f.asks[0].first.stream() == "ch1");
  CHECK(f.asks[0].first.client_address() == "10.0.0.1");
  CHECK(f.asks[0].first.scheme() == "http");
  CHECK_FALSE(first.has_value());  // held until central answers
  f.asks[0].second(Chosen("edge-1"));
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(first->result_int() == 302);
  CHECK(std::string((*first)["Location"]) ==
        "http://edge-1.example.net:8081/ch1/index.m3u8?token=a");
  CHECK(std::string((*second)["Location"]) ==
        "http://edge-1.example.net:8081/ch1/index.m3u8?token=b");
  // Within the second: from the cache. After it: asked again.
  f.clock.Advance(std::chrono::milliseconds(999));
  CHECK(f.Ask("ch1", "10.0.0.1")->result_int() == 302);
  CHECK(f.asks.size() == 1);
  f.clock.Advance(std::chrono::milliseconds(1));
  auto& later = f.Ask("ch1", "10.0.0.1");
  CHECK(f.asks.size() == 2);
  // Central chose this very node: its view is ours, so the node's own 404.
  f.asks[1].second(Chosen("self"));
  CHECK(later->result_int() == 404);
}

TEST_CASE("Z-22 central's refusals map to 404 and 503, and asks in flight are bounded") {
  RedirectFixture f;
  auto& unknown = f.Ask("nope", "10.0.0.1");
  auto& none = f.Ask("ch1", "10.0.0.2");
  auto& busy = f.Ask("ch1", "10.0.0.3");  // a third distinct ask: over the bound of two
  REQUIRE(busy.has_value());
  CHECK(busy->result_int() == 503);
  CHECK_FALSE(std::string((*busy)["Retry-After"]).empty());
  REQUIRE(f.asks.size() == 2);
  f.asks[0].second(absl::NotFoundError("unknown stream"));
  f.asks[1].second(absl::UnavailableError("no eligible node"));
  CHECK(unknown->result_int() == 404);
  CHECK(none->result_int() == 503);
  // A 503 is not kept: the next viewer asks again at once.
  f.Ask("ch1", "10.0.0.2");
  CHECK(f.asks.size() == 3);
}

TEST_CASE("Z-22 only live entries name a stream to ask about") {
  CHECK(CentralRedirect::EntryStream("/news/hd/index.m3u8") == "news/hd");
  CHECK(CentralRedirect::EntryStream("/ch1/index.ll.m3u8") == "ch1");
  CHECK(CentralRedirect::EntryStream("/ch1/index.mpd") == "ch1");
  CHECK_FALSE(CentralRedirect::EntryStream("/ch1/v1/12.ts"));
  CHECK_FALSE(CentralRedirect::EntryStream("/index.m3u8"));
  CHECK_FALSE(CentralRedirect::EntryStream("/ch1/v1/index.m3u8x"));
}

}  // namespace
}  // namespace meshwork::streamer
