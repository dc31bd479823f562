// Helpers shared by the HTTP server's unit tests (server_test.cc, server_scatter_test.cc,
// server_framing_test.cc): options with small limits, a default router, and a client fetch.
#pragma once
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/http/client.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "common/http/router.h"
#include "common/http/server.h"
#include "common/net/cidr.h"
#include "common/status/status_map.h"
#include "nlohmann/json.hpp"
#include "tests/raw_connection.h"

namespace meshwork::http::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using nlohmann::json;
using namespace std::chrono_literals;
using meshwork::testing::RawConnection;
constexpr size_t kHeaderLimit = 1024;
constexpr uint64_t kBodyLimit = 1024;

inline ServerOptions SmallOptions() {
  ServerOptions options;
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 2;
  options.header_limit_bytes = kHeaderLimit;
  options.body_limit_bytes = kBodyLimit;
  options.idle_timeout = 30s;
  options.read_timeout = 10s;
  return options;
}

// Routes used by most tests: GET /hello, POST /echo, GET /client, GET|PUT /items/{id}.
inline Router DefaultRouter() {
  Router router;
  router.Add({Verb::get}, "/hello", [](RequestContext&, Responder responder) {
    responder.Send(MakeResponse(Status::ok, "hello", "text/plain"));
  });
  router.Add({Verb::post}, "/echo", [](RequestContext& ctx, Responder responder) {
    responder.Send(MakeResponse(Status::ok, ctx.request.body(), "text/plain"));
  });
  router.Add({Verb::get}, "/client", [](RequestContext& ctx, Responder responder) {
    responder.Send(JsonResponse(Status::ok, {{"client", ctx.client.ToString()},
                                             {"peer", ctx.peer.ToString()},
                                             {"peer_trusted", ctx.peer_trusted}}));
  });
  router.Add({Verb::get, Verb::put}, "/items/{id}", [](RequestContext& ctx, Responder responder) {
    responder.Send(JsonResponse(Status::ok, {{"id", ctx.params.at(0)}}));
  });
  return router;
}

inline std::unique_ptr<Server> StartServer(ServerOptions options, Router router) {
  auto server = Server::Start(std::move(options), std::move(router));
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  return std::move(*server);
}

inline Response Get(const Server& server, std::string target, Verb method = Verb::get,
                    std::vector<std::pair<std::string, std::string>> headers = {},
                    std::string body = "") {
  ClientRequest request;
  request.host = "127.0.0.1";
  request.port = server.port();
  request.method = method;
  request.target = std::move(target);
  request.headers = std::move(headers);
  request.body = std::move(body);
  request.timeout = 5000ms;
  auto response = Fetch(std::move(request));
  INFO(response.status().ToString());
  REQUIRE(response.ok());
  return std::move(*response);
}

// Checks the M-1 error body of `response`.
inline void CheckErrorBody(const Response& response, int status, std::string_view code) {
  INFO(response.body());
  CHECK(response.result_int() == static_cast<unsigned>(status));
  CHECK(response[beast_http::field::content_type] == "application/json");
  json body = json::parse(response.body(), nullptr, false);
  REQUIRE(body.is_object());
  REQUIRE(body.contains("error"));
  CHECK(body["error"]["status"] == status);
  CHECK(body["error"]["code"] == std::string(code));
  CHECK(body["error"]["message"].is_string());
  CHECK_FALSE(body["error"]["message"].get<std::string>().empty());
}

// A Responder sink that only knows Complete (the fallbacks of SendBuffers and SendPrepared
// write through it): keeps the answer in `*out`.
class CapturingSink final : public Responder::Sink {
 public:
  explicit CapturingSink(std::optional<Response>* out) : out_(out) {}
  void Complete(Response response) override { *out_ = std::move(response); }

 private:
  std::optional<Response>* out_;
};

}  // namespace meshwork::http::test
