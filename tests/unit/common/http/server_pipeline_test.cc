// The HTTP/1.1 request path without composed reads (P-5, P-2): the header parsed on the
// connection's buffer however it arrives, answers sent at once from inside the handler's
// call, and pipelined bursts served in order within a bounded stack.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/http/response.h"
#include "common/http/server.h"
#include "common/metrics/metrics.h"
#include "prometheus/registry.h"
#include "tests/raw_connection.h"
#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http {
namespace server_pipeline_test {

using meshwork::testing::RawConnection;
using namespace std::chrono_literals;

std::unique_ptr<Server> Start(Router router, prometheus::Registry* registry = nullptr) {
  ServerOptions options = test::SmallOptions();
  options.registry = registry;
  return test::StartServer(std::move(options), std::move(router));
}

// GET /n/{i}: answers "i" at once, then reads its context again (after Send).
struct Recorder {
  std::mutex mu;
  std::condition_variable recorded;
  std::vector<std::string> after_send;  // the path each handler saw after answering

  void Add(std::string path) {
    {
      std::lock_guard lock(mu);
      after_send.push_back(std::move(path));
    }
    recorded.notify_all();
  }
  // The paths once `n` are recorded (or after 10 s, whatever is there): a handler records
  // after its answer has left, so the client can hold the last answer first.
  std::vector<std::string> WaitFor(size_t n) {
    std::unique_lock lock(mu);
    recorded.wait_for(lock, std::chrono::seconds(10), [&] { return after_send.size() >= n; });
    return after_send;
  }
};

Router EchoRouter(std::shared_ptr<Recorder> recorder) {
  Router router;
  router.Add({Verb::get}, "/n/{i}", [recorder](RequestContext& ctx, Responder r) {
    r.Send(MakeResponse(Status::ok, ctx.params.at(0), "text/plain"));
    // The context stays valid for the rest of the call even though the answer has left.
    std::string path(ctx.path);
    recorder->Add(std::move(path));
  });
  return router;
}

TEST_CASE("P-5 a request header split anywhere, even inside the start line, is parsed") {
  auto recorder = std::make_shared<Recorder>();
  auto server = Start(EchoRouter(recorder));
  const std::string request = "GET /n/7 HTTP/1.1\r\nHost: a\r\nX-Long: abcdefghij\r\n\r\n";
  for (size_t cut : {1ul, 5ul, 18ul, 19ul, 20ul, 30ul, request.size() - 1}) {
    INFO("cut at " << cut);
    RawConnection conn(server->port());
    conn.Write(request.substr(0, cut));
    std::this_thread::sleep_for(5ms);  // lets the first piece arrive as a read of its own
    conn.Write(request.substr(cut));
    auto response = conn.Read();
    REQUIRE(response);
    CHECK(response->result_int() == 200);
    CHECK(response->body() == "7");
  }
}

// Writes `requests` in batches of 1000 (each fits the socket buffers, so writing never waits
// for our reads) and reads the answers of each batch: the server always has a run of
// requests waiting in its buffer. Returns the answers in order; stops at the first missing.
std::vector<Response> Pipeline(RawConnection& conn, const std::vector<std::string>& requests) {
  std::vector<Response> answers;
  for (size_t start = 0; start < requests.size(); start += 1000) {
    size_t end = std::min(requests.size(), start + 1000);
    std::string batch;
    for (size_t i = start; i < end; ++i) batch += requests[i];
    conn.Write(batch);
    for (size_t i = start; i < end; ++i) {
      auto response = conn.Read(10s);
      if (!response) return answers;
      answers.push_back(std::move(*response));
    }
  }
  return answers;
}

TEST_CASE("P-5 a burst of pipelined requests is answered whole and in order") {
  auto recorder = std::make_shared<Recorder>();
  auto server = Start(EchoRouter(recorder));
  // Each is answered at once from inside its handler: without a bound the call chain would
  // nest once per request waiting in the buffer.
  constexpr int kRequests = 20000;
  std::vector<std::string> requests;
  for (int i = 0; i < kRequests; ++i) {
    requests.push_back("GET /n/" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
  }
  RawConnection conn(server->port());
  auto answers = Pipeline(conn, requests);
  REQUIRE(answers.size() == static_cast<size_t>(kRequests));
  int in_order = 0;
  while (in_order < kRequests && answers[in_order].body() == std::to_string(in_order)) ++in_order;
  CHECK(in_order == kRequests);
  auto after_send = recorder->WaitFor(kRequests);
  REQUIRE(after_send.size() == static_cast<size_t>(kRequests));
  CHECK(after_send.front() == "/n/0");
  CHECK(after_send.back() == "/n/" + std::to_string(kRequests - 1));
}

TEST_CASE("P-5 an unknown path among pipelined requests answers 404 and the rest go on") {
  auto recorder = std::make_shared<Recorder>();
  auto server = Start(EchoRouter(recorder));
  RawConnection conn(server->port());
  std::vector<std::string> requests(3000, "GET /nothing HTTP/1.1\r\n\r\n");
  requests.push_back("GET /n/1 HTTP/1.1\r\n\r\n");
  auto answers = Pipeline(conn, requests);
  REQUIRE(answers.size() == requests.size());
  int not_found = 0;
  while (not_found < 3000 && answers[not_found].result_int() == 404) ++not_found;
  CHECK(not_found == 3000);
  CHECK(answers.back().body() == "1");
}

TEST_CASE("P-5 pipelined requests read by either parser stay in step") {
  // Common headers (request_head.h) and those left to Beast (bodies, a folded line, chunked)
  // in one burst: each parser takes exactly its request and the next starts where it ended.
  auto recorder = std::make_shared<Recorder>();
  Router router = EchoRouter(recorder);
  router.Add({Verb::post}, "/body", [](RequestContext& ctx, Responder r) {
    r.Send(MakeResponse(Status::ok, "got " + ctx.request.body(), "text/plain"));
  });
  auto server = Start(std::move(router));
  RawConnection conn(server->port());
  std::vector<std::string> requests = {
      "GET /n/1 HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /n/2 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
      "POST /body HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
      "GET /n/3 HTTP/1.1\r\nX-Folded: a\r\n b\r\n\r\n",
      "POST /body HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
      "GET /n/4 HTTP/1.1\r\nConnection: keep-alive\r\n\r\n",
      "GET /n/5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
  };
  auto answers = Pipeline(conn, requests);
  REQUIRE(answers.size() == requests.size());
  CHECK(answers[0].body() == "1");
  CHECK(answers[1].body() == "2");
  CHECK(answers[2].body() == "got hello");
  CHECK(answers[3].body() == "3");
  CHECK(answers[4].body() == "got ok");
  CHECK(answers[5].body() == "4");
  CHECK(answers[6].body() == "5");
}

TEST_CASE("P-5 a streaming handler may read its context after answering from a body callback") {
  auto recorder = std::make_shared<Recorder>();
  // Reads the body to its end, answers from the callback that sees the end, then reads the
  // context: the answer has left whole by then, and the context must still be this
  // request's until the callback returns (ASan sees it if it was freed).
  struct Upload : std::enable_shared_from_this<Upload> {
    RequestContext* ctx;
    std::shared_ptr<BodyReader> body;
    std::optional<Responder> responder;
    std::shared_ptr<Recorder> recorder;
    void Next() {
      body->Read([self = shared_from_this()](const absl::Status& status, std::span<const uint8_t>,
                                             bool done) {
        if (status.ok() && !done) return self->Next();
        self->responder->Send(MakeResponse(Status::ok, "stored", "text/plain"));
        std::string path(self->ctx->path);
        self->recorder->Add(std::move(path));
      });
    }
  };
  Router router;
  router.AddStreaming(
      {Verb::put}, "/up/{name}",
      [recorder](RequestContext& ctx, std::shared_ptr<BodyReader> body, Responder r) {
        auto upload = std::make_shared<Upload>();
        upload->ctx = &ctx;
        upload->body = std::move(body);
        upload->responder.emplace(std::move(r));
        upload->recorder = recorder;
        upload->Next();
      });
  auto server = Start(std::move(router));
  RawConnection conn(server->port());
  std::vector<std::string> requests;
  for (int i = 0; i < 50; ++i) {
    requests.push_back("PUT /up/f" + std::to_string(i) +
                       " HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  }
  auto answers = Pipeline(conn, requests);
  REQUIRE(answers.size() == requests.size());
  auto after_send = recorder->WaitFor(requests.size());
  REQUIRE(after_send.size() == requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    CHECK(after_send[i] == "/up/f" + std::to_string(i));
  }
}

// The value of the series starting with `series` in `text` (-1 when absent).
double SeriesValue(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST_CASE("M-4 requests counted per worker reach /metrics whole") {
  prometheus::Registry registry;
  auto recorder = std::make_shared<Recorder>();
  auto server = Start(EchoRouter(recorder), &registry);
  // Several connections, so both workers count; each tally is folded in when scraped.
  constexpr int kConnections = 6, kEach = 50;
  // Each worker remembers its last (method, status): runs of one key and alternations of
  // two, GET 200 and GET 404, are counted to the right series.
  int not_found = 0;
  for (int c = 0; c < kConnections; ++c) {
    RawConnection conn(server->port());
    for (int i = 0; i < kEach; ++i) {
      bool miss = c % 2 == 1 && i % 3 != 0;
      conn.Write(miss ? std::string("GET /nothing HTTP/1.1\r\n\r\n")
                      : "GET /n/" + std::to_string(i) + " HTTP/1.1\r\n\r\n");
      REQUIRE(conn.Read());
      not_found += miss ? 1 : 0;
    }
  }
  std::string text = metrics::RenderText(registry);
  INFO(text);
  const double total = kConnections * kEach;
  REQUIRE(not_found > 0);
  CHECK(SeriesValue(text,
                    R"(meshwork_http_requests_total{listener="test",method="GET",status="200"})") ==
        total - not_found);
  CHECK(SeriesValue(text,
                    R"(meshwork_http_requests_total{listener="test",method="GET",status="404"})") ==
        not_found);
  CHECK(SeriesValue(text, R"(meshwork_http_request_duration_seconds_count{listener="test"})") ==
        total);
  CHECK(SeriesValue(
            text, R"(meshwork_http_request_duration_seconds_bucket{listener="test",le="+Inf"})") ==
        total);
  // Bytes count when a write ends, which may be just after the client read the answer: at
  // least every answer's status line, and never more than the listener's own tally.
  double sent = SeriesValue(text, R"(meshwork_http_sent_bytes_total{listener="test"})");
  CHECK(sent >= total * 17);
  CHECK(sent <= static_cast<double>(server->counters().bytes_out));
  CHECK(SeriesValue(text, R"(meshwork_http_received_bytes_total{listener="test"})") >= total * 17);
  // A second scrape adds nothing that was already folded in.
  CHECK(SeriesValue(metrics::RenderText(registry),
                    R"(meshwork_http_requests_total{listener="test",method="GET",status="200"})") ==
        total - not_found);
}

TEST_CASE("M-4 R-3 methods a client makes up share one label: the series set stays bounded") {
  prometheus::Registry registry;
  auto recorder = std::make_shared<Recorder>();
  auto server = Start(EchoRouter(recorder), &registry);
  RawConnection conn(server->port());
  constexpr int kMadeUp = 40;
  for (int i = 0; i < kMadeUp; ++i) {
    conn.Write("M" + std::to_string(i) + "X /n/1 HTTP/1.1\r\n\r\n");
    REQUIRE(conn.Read());
  }
  conn.Write("GET /n/1 HTTP/1.1\r\n\r\n");
  REQUIRE(conn.Read());
  std::string text = metrics::RenderText(registry);
  INFO(text);
  CHECK(SeriesValue(
            text, R"(meshwork_http_requests_total{listener="test",method="OTHER",status="405"})") ==
        kMadeUp);
  CHECK(text.find("method=\"M1X\"") == std::string::npos);
  CHECK(SeriesValue(text,
                    R"(meshwork_http_requests_total{listener="test",method="GET",status="200"})") ==
        1);
}

}  // namespace server_pipeline_test
}  // namespace meshwork::http
