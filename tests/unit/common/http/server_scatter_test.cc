// The HTTP server's chunked and scatter-gather answers (S-16, L-17).
#include <catch2/catch.hpp>
#include <future>

#include "tests/unit/common/http/server_test_util.h"

namespace meshwork::http {
namespace {

using namespace test;

TEST_CASE("S-16 a chunked response carries its pieces in order, written from another thread") {
  Router router;
  std::thread producer;
  router.Add({Verb::get}, "/pieces", [&producer](RequestContext&, Responder r) {
    Response header{Status::ok, 11};
    header.set(beast_http::field::content_type, "video/mp4");
    auto writer = r.StartChunked(std::move(header));
    REQUIRE(writer);
    // The pieces come later, from a thread of the producer's own.
    producer = std::thread([writer] {
      for (const char* piece : {"moof-1|", "mdat-1|", "moof-2|", "mdat-2"}) {
        writer->Write(std::make_shared<const std::string>(piece));
      }
      writer->Finish();
      writer->Write(std::make_shared<const std::string>("ignored after Finish"));
    });
  });
  router.Add({Verb::get}, "/after", [](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, "next", "text/plain"));
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("GET /pieces HTTP/1.1\r\nHost: x\r\n\r\n");
  auto res = conn.Read();
  producer.join();
  REQUIRE(res);
  CHECK(res->result_int() == 200);
  CHECK(res->chunked());
  CHECK(res->body() == "moof-1|mdat-1|moof-2|mdat-2");
  // The connection stays usable after the last chunk.
  conn.Write("GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  auto next = conn.Read();
  REQUIRE(next);
  CHECK(next->body() == "next");
}

TEST_CASE(
    "S-16 a chunked answer to HEAD is its header only, and to HTTP/1.0 raw bytes ended by "
    "the close") {
  Router router;
  router.Add({Verb::get}, "/pieces", [](RequestContext&, Responder r) {
    // On the server's thread: no Catch2 assertion here (they are not thread-safe).
    auto writer = r.StartChunked(Response{Status::ok, 11});
    if (!writer) return;
    for (const char* piece : {"moof-1|", "mdat-1"}) {
      writer->Write(std::make_shared<const std::string>(piece));
    }
    writer->Finish();
  });
  router.Add({Verb::get}, "/after", [](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, "next", "text/plain"));
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  SECTION("HEAD, then another request on the same connection") {
    RawConnection conn(server->port());
    conn.Write("HEAD /pieces HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
    auto head = conn.Read(5000ms, /*head=*/true);
    REQUIRE(head);
    CHECK(head->result_int() == 200);
    // What follows the header is the next answer, not the body's chunks.
    auto next = conn.Read();
    REQUIRE(next);
    CHECK(next->result_int() == 200);
    CHECK(next->body() == "next");
  }
  SECTION("HTTP/1.0: no Transfer-Encoding (RFC 9112 6.1), the body ends with the connection") {
    RawConnection conn(server->port());
    conn.Write("GET /pieces HTTP/1.0\r\nHost: x\r\n\r\n");
    auto res = conn.Read();
    REQUIRE(res);
    CHECK(res->result_int() == 200);
    CHECK(res->find(beast_http::field::transfer_encoding) == res->end());
    CHECK(res->body() == "moof-1|mdat-1");
  }
  SECTION("HEAD over HTTP/1.0: no Transfer-Encoding in the header either") {
    RawConnection conn(server->port());
    conn.Write("HEAD /pieces HTTP/1.0\r\nHost: x\r\n\r\n");
    auto res = conn.Read(5000ms, /*head=*/true);
    REQUIRE(res);
    CHECK(res->result_int() == 200);
    CHECK(res->find(beast_http::field::transfer_encoding) == res->end());
  }
}

TEST_CASE(
    "S-16 R-3 HEAD on a chunked answer whose object is still arriving frees the connection at "
    "once and tells the producer") {
  Router router;
  auto slot = std::make_shared<std::promise<std::shared_ptr<ChunkedWriter>>>();
  router.Add({Verb::get}, "/arriving", [slot](RequestContext&, Responder r) {
    auto writer = r.StartChunked(Response{Status::ok, 11});
    if (writer) writer->Write(std::make_shared<const std::string>("moof-1|"));
    slot->set_value(writer);  // kept by the test: the object never ends here
  });
  router.Add({Verb::get}, "/after", [](RequestContext&, Responder r) {
    r.Send(MakeResponse(Status::ok, "next", "text/plain"));
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("HEAD /arriving HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = conn.Read(5000ms, /*head=*/true);
  REQUIRE(head);
  CHECK(head->result_int() == 200);
  auto next = conn.Read(5000ms);
  REQUIRE(next);
  CHECK(next->body() == "next");
  auto writer = slot->get_future().get();
  REQUIRE(writer);
  CHECK(writer->closed());
  // Late chunks and the end go nowhere: the connection answers on, byte-exact.
  writer->Write(std::make_shared<const std::string>("mdat-1"));
  writer->Finish();
  conn.Write("GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  auto last = conn.Read(5000ms);
  REQUIRE(last);
  CHECK(last->body() == "next");
}

TEST_CASE("P-13 an aborted chunked answer closes the connection without its last chunk") {
  Router router;
  router.Add({Verb::get}, "/cut", [](RequestContext&, Responder r) {
    auto writer = r.StartChunked(Response{Status::ok, 11});
    REQUIRE(writer);
    writer->Write(std::make_shared<const std::string>("moof-1|"));
    writer->Abort();
    writer->Finish();  // after Abort: changes nothing
  });
  auto server = StartServer(SmallOptions(), std::move(router));
  RawConnection conn(server->port());
  conn.Write("GET /cut HTTP/1.1\r\nHost: x\r\n\r\n");
  // The head and the piece, then the end of the connection without "0\r\n\r\n": the
  // client's parser reports a cut message, never a whole one.
  auto res = conn.Read();
  CHECK_FALSE(res);
  CHECK(conn.last_error() == beast_http::error::partial_message);
}

// L-17: media objects kept as 256 KiB chunks, written from the chunks (scatter-gather).

constexpr size_t kChunk = 256 * 1024;
constexpr size_t kMediaSize = 3 * kChunk + 17;

// The bytes of the test object: no period that lines up with the chunk size.
const std::string& MediaBytes() {
  static const std::string bytes = [] {
    std::string out(kMediaSize, '\0');
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<char>((static_cast<uint32_t>(i) * 2654435761u) >> 13);
    }
    return out;
  }();
  return bytes;
}

// MediaBytes() cut into fresh chunks of kChunk bytes (the last one shorter).
SharedBuffers MediaChunks() {
  SharedBuffers body;
  for (size_t at = 0; at < kMediaSize; at += kChunk) {
    body.Append(std::make_shared<const std::string>(MediaBytes().substr(at, kChunk)));
  }
  return body;
}

// GET|HEAD /media answers with SendMedia; the handler keeps no reference to the chunks, and
// `last_chunk` lets a test see when the server lets go of them.
struct MediaRoute {
  std::mutex mu;
  std::weak_ptr<const std::string> last_chunk;

  Router MakeRouter() {
    Router router = DefaultRouter();
    router.Add({Verb::get}, "/media", [this](RequestContext& ctx, Responder r) {
      SharedBuffers body = MediaChunks();
      {
        std::lock_guard<std::mutex> lock(mu);
        last_chunk = body.chunks.back();
      }
      Response extra;
      extra.set(beast_http::field::cache_control, "max-age=60");
      SendMedia(ctx.request, r, std::move(body), "video/mp4", std::move(extra));
    });
    return router;
  }
  bool ChunksReleased() {
    std::lock_guard<std::mutex> lock(mu);
    return last_chunk.expired();
  }
};

// Waits up to 2 s for `condition` (set by a write's completion, which may trail the bytes).
template <typename Fn>
bool Eventually(Fn condition) {
  for (int i = 0; i < 200 && !condition(); ++i) std::this_thread::sleep_for(10ms);
  return condition();
}

TEST_CASE("L-17 scatter-gather response sends the chunks byte for byte") {
  MediaRoute route;
  auto options = SmallOptions();
  auto server = StartServer(options, route.MakeRouter());
  uint64_t out_before = server->counters().bytes_out;
  Response res = Get(*server, "/media");
  CHECK(res.result() == Status::ok);
  CHECK(res[beast_http::field::content_length] == std::to_string(kMediaSize));
  CHECK(res[beast_http::field::content_type] == "video/mp4");
  CHECK(res[beast_http::field::accept_ranges] == "bytes");
  CHECK(res[beast_http::field::cache_control] == "max-age=60");
  CHECK(res[beast_http::field::server] == "meshwork");
  CHECK(res.find(beast_http::field::content_range) == res.end());
  REQUIRE(res.body().size() == kMediaSize);
  CHECK(res.body() == MediaBytes());
  // Bytes out count the header and the whole body; the chunks are let go after the write.
  CHECK(Eventually([&] { return server->counters().bytes_out - out_before > kMediaSize; }));
  CHECK(Eventually([&] { return route.ChunksReleased(); }));
}

TEST_CASE("L-17 a Range across chunk boundaries on a scatter-gather response answers 206") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  struct Case {
    std::string range;
    uint64_t first, last;
  };
  for (const Case& c : std::vector<Case>{
           {"bytes=262100-262200", 262100, 262200},           // across the first boundary
           {"bytes=100-600000", 100, 600000},                 // across two boundaries
           {"bytes=-100", kMediaSize - 100, kMediaSize - 1},  // into the 17-byte last chunk
           {"bytes=786000-", 786000, kMediaSize - 1},         // open-ended
           {"bytes=262144-262144", 262144, 262144},           // first byte of a chunk
           {"bytes=0-99999999", 0, kMediaSize - 1},           // past the end: cut
       }) {
    INFO(c.range);
    Response res = Get(*server, "/media", Verb::get, {{"Range", c.range}});
    CHECK(res.result() == Status::partial_content);
    CHECK(res[beast_http::field::content_range] == "bytes " + std::to_string(c.first) + "-" +
                                                       std::to_string(c.last) + "/" +
                                                       std::to_string(kMediaSize));
    CHECK(res[beast_http::field::content_length] == std::to_string(c.last - c.first + 1));
    CHECK(res.body() == MediaBytes().substr(c.first, c.last - c.first + 1));
  }
}

TEST_CASE("L-17 HEAD on a scatter-gather response sends the length and no body") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  conn.Write("HEAD /media HTTP/1.1\r\nHost: x\r\n\r\n");
  auto head = conn.Read(5000ms, /*head=*/true);
  REQUIRE(head);
  CHECK(head->result() == Status::ok);
  CHECK((*head)[beast_http::field::content_length] == std::to_string(kMediaSize));
  CHECK((*head)[beast_http::field::server] == "meshwork");
  CHECK(head->body().empty());
  conn.Write("HEAD /media HTTP/1.1\r\nHost: x\r\nRange: bytes=10-19\r\n\r\n");
  auto ranged = conn.Read(5000ms, /*head=*/true);
  REQUIRE(ranged);
  CHECK(ranged->result() == Status::partial_content);
  CHECK((*ranged)[beast_http::field::content_length] == "10");
  // No body bytes followed either header: the next response on the connection is intact.
  conn.Write("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  auto get = conn.Read();
  REQUIRE(get);
  CHECK(get->body() == "hello");
}

TEST_CASE("L-17 two scatter-gather responses on one keep-alive connection are both answered") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  // Pipelined: the second request is already waiting when the first write completes.
  conn.Write(
      "GET /media HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=262143-262145\r\n\r\n");
  auto first = conn.Read();
  REQUIRE(first);
  CHECK(first->result() == Status::ok);
  CHECK(first->keep_alive());
  CHECK(first->body() == MediaBytes());
  auto second = conn.Read();
  REQUIRE(second);
  CHECK(second->result() == Status::partial_content);
  CHECK(second->keep_alive());
  CHECK(second->body() == MediaBytes().substr(262143, 3));

  // Connection: close is honoured.
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto third = conn.Read();
  REQUIRE(third);
  CHECK(third->body() == MediaBytes());
  CHECK_FALSE(third->keep_alive());
  CHECK(conn.ClosedByPeer());
}

TEST_CASE("L-17 an unsatisfiable range on a scatter-gather response answers 416") {
  MediaRoute route;
  auto server = StartServer(SmallOptions(), route.MakeRouter());
  RawConnection conn(server->port());
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=786449-\r\n\r\n");
  auto res = conn.Read();
  REQUIRE(res);
  CHECK(res->result() == Status::range_not_satisfiable);
  CHECK((*res)[beast_http::field::content_range] == "bytes */786449");
  CHECK((*res)[beast_http::field::cache_control] == "max-age=60");
  CHECK((*res)[beast_http::field::content_length] == "0");
  CHECK(res->body().empty());
  CHECK(res->keep_alive());
  conn.Write("GET /media HTTP/1.1\r\nHost: x\r\nRange: bytes=0-0\r\n\r\n");
  auto next = conn.Read();
  REQUIRE(next);
  CHECK(next->result() == Status::partial_content);
  CHECK(next->body() == MediaBytes().substr(0, 1));
}

TEST_CASE("L-17 a sink without scatter-gather gets the slice copied into a string body") {
  std::optional<Response> got;
  Responder r(std::make_shared<CapturingSink>(&got));
  Response header{Status::ok, 11};
  header.set(beast_http::field::content_type, "video/mp4");
  header.body() = "ignored";
  r.SendBuffers(std::move(header), MediaChunks(), kChunk - 5, 10);
  CHECK(r.sent());
  REQUIRE(got);
  CHECK(got->result() == Status::ok);
  CHECK((*got)[beast_http::field::content_type] == "video/mp4");
  CHECK((*got)[beast_http::field::content_length] == "10");
  CHECK(got->body() == MediaBytes().substr(kChunk - 5, 10));

  // A slice past the end is cut to the bytes the chunks hold.
  got.reset();
  Responder tail(std::make_shared<CapturingSink>(&got));
  tail.SendBuffers(Response{Status::ok, 11}, MediaChunks(), kMediaSize - 3, 1000);
  REQUIRE(got);
  CHECK(got->body() == MediaBytes().substr(kMediaSize - 3));
}

TEST_CASE("L-17 SendMedia and MediaResponse answer ranges alike") {
  auto whole = std::make_shared<const std::string>(MediaBytes());
  for (std::string range : {"", "bytes=262100-262200", "bytes=-17", "bytes=5-", "bytes=786449-",
                            "bytes=-0", "bytes=1-2,5-6", "items=0-1"}) {
    INFO(range);
    Request request{Verb::get, "/media", 11};
    if (!range.empty()) request.set(beast_http::field::range, range);
    Response expected = MediaResponse(request, whole, "video/mp4");
    std::optional<Response> got;
    Responder r(std::make_shared<CapturingSink>(&got));
    SendMedia(request, r, MediaChunks(), "video/mp4");
    REQUIRE(got);
    CHECK(got->result() == expected.result());
    CHECK((*got)[beast_http::field::content_range] == expected[beast_http::field::content_range]);
    CHECK((*got)[beast_http::field::content_length] == expected[beast_http::field::content_length]);
    CHECK((*got)[beast_http::field::accept_ranges] == "bytes");
    CHECK(got->body() == expected.body());
  }
}

}  // namespace
}  // namespace meshwork::http
