// The live origin over real HTTP on a real streamer placed by a real central (L-1…L-14,
// L-18): publishes with X-Pipeline, holds, 404 with TTL, 410, masks and invalidation pushed
// from central, notifications, a broken upload, the object size limit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <future>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/raw_connection.h"

namespace meshwork::testing {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

HttpResult PutObject(const Streamer& node, const std::string& path, const std::string& body,
                     const std::string& pipeline,
                     std::vector<std::pair<std::string, std::string>> extra = {}) {
  extra.emplace_back("X-Pipeline", pipeline);
  return Http("PUT", node.publish, path, body, extra);
}

// A blocking TCP connection to `address` (127.0.0.1:PORT).
int ConnectTo(const std::string& address) {
  auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  return fd;
}

// Sends a PUT whose body stops halfway, then closes the connection (L-2).
void BrokenUpload(const std::string& address, const std::string& path) {
  int fd = ConnectTo(address);
  std::string request = "PUT " + path +
                        " HTTP/1.1\r\nHost: x\r\nX-Pipeline: a\r\nContent-Length: 100000\r\n\r\n" +
                        std::string(50'000, 'x');
  REQUIRE(send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size()));
  close(fd);
}

// L-2: PUTs `pieces` as chunks of one chunked body, each in its own send(); the status line.
std::string ChunkedUpload(const std::string& address, const std::string& path,
                          const std::vector<std::string>& pieces) {
  int fd = ConnectTo(address);
  auto send_all = [fd](const std::string& bytes) {
    REQUIRE(send(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  };
  send_all("PUT " + path +
           " HTTP/1.1\r\nHost: x\r\nX-Pipeline: a\r\nTransfer-Encoding: chunked\r\n\r\n");
  for (const auto& piece : pieces) {
    char size[32];
    snprintf(size, sizeof size, "%zx\r\n", piece.size());
    send_all(size + piece + "\r\n");
  }
  send_all("0\r\n\r\n");
  std::string answer(256, '\0');
  ssize_t n = recv(fd, answer.data(), answer.size(), 0);
  close(fd);
  answer.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return answer.substr(0, answer.find("\r\n"));
}

// Central and an origin streamer `origin-1` holding stream `live` (2 s segments, a window of 4,
// pipelines a and b) whose msn 5 was in production when it was created, placed on the node.
struct LiveOrigin {
  Central central;
  Streamer node;
  int64_t start = 0;  // the template's availability start
  int64_t Producing() const { return (NowMs() - start) / 2000; }
};
LiveOrigin StartLiveOrigin(const std::string& tag, const std::vector<std::string>& flags) {
  LiveOrigin o;
  auto dir = MakeTempDir(tag);
  o.central = StartCentral(dir);
  o.node = StartStreamer(o.central.grpc, "origin-1", "origin", flags);
  o.start = NowMs() - 10'500;
  nlohmann::json stream = {{"placement", {{"streamers", {"origin-1"}}}},
                           {"segment_ms", 2000},
                           {"live_window", 4},
                           {"pipelines", {"a", "b"}},
                           {"template", {{"availability_start", o.start}}}};
  REQUIRE(Http("PUT", o.central.http, "/central/api-v4/streams/live", stream.dump()).status == 201);
  // Placed: the publish listener knows the stream.
  REQUIRE(Eventually(
      [&] { return PutObject(o.node, "/live/v1/init.mp4", "init", "a").status == 201; }, 10s));
  return o;
}

TEST_CASE("L-1 L-2 L-6 L-7 L-8 L-9 L-10 L-13 L-14 L-18 a published stream on a real origin") {
  auto origin = StartLiveOrigin("origin", {"--max-object-bytes=200000"});
  const auto& central = origin.central;
  const auto& node = origin.node;
  const int64_t start = origin.start;
  auto producing = [&] { return origin.Producing(); };

  // L-1: created, replaced, another pipeline's candidate; the preferred one is served.
  int64_t m = producing() - 1;
  std::string ms = std::to_string(m);
  CHECK(PutObject(node, "/live/v1/" + ms + ".ts", "first", "b").status == 201);
  CHECK(PutObject(node, "/live/v1/" + ms + ".ts", "second", "a").status == 201);
  CHECK(PutObject(node, "/live/v1/" + ms + ".ts", "third", "a", {{"X-Region", "eu"}}).status ==
        204);
  auto got = Http("GET", node.http, "/live/v1/" + ms + ".ts");
  CHECK(got.status == 200);
  CHECK(got.body == "third");
  CHECK(got.headers["X-Pipeline"] == "a");
  std::string etag = got.headers["ETag"];
  CHECK_FALSE(etag.empty());
  // Bad headers: 400 naming the header, nothing stored.
  auto bad = Http("PUT", node.publish, "/live/v1/" + ms + ".ts", "evil");
  CHECK(bad.status == 400);
  CHECK(bad.Json()["error"]["field"] == "X-Pipeline");
  CHECK(Http("GET", node.http, "/live/v1/" + ms + ".ts").body == "third");
  // L-2: a body in chunks, as they arrive, is one object.
  CHECK(ChunkedUpload(node.publish, "/live/v2/" + ms + ".ts",
                      {std::string(40'000, 'a'), "b", std::string(20'000, 'c')}) ==
        "HTTP/1.1 201 Created");
  CHECK(Http("GET", node.http, "/live/v2/" + ms + ".ts").body ==
        std::string(40'000, 'a') + "b" + std::string(20'000, 'c'));
  // A packager's own playlist PUT beside its segments: acknowledged, not kept.
  CHECK(Http("PUT", node.publish, "/live/v1/index.m3u8", "#EXTM3U\n#X-PACKAGER-OWN\n").status ==
        204);
  auto own = Http("GET", node.http, "/live/v1/index.m3u8");
  CHECK(own.status == 200);
  CHECK(own.body.find("X-PACKAGER-OWN") == std::string::npos);
  // R-3: one for a stream not placed here is refused on its header, its body not read: a
  // client announcing a megabyte and sending none of it has its 404 at once.
  {
    RawConnection conn(Port(node.publish));
    conn.Write(
        "PUT /elsewhere/v1/index.m3u8 HTTP/1.1\r\nHost: a\r\nContent-Length: 1048576\r\n\r\n");
    auto answer = conn.Read(2000ms);
    REQUIRE(answer);
    CHECK(answer->result_int() == 404);
    CHECK(conn.ClosedByPeer());
  }

  // L-6: unknown rendition → 404 with max-age=1.
  auto unknown = Http("GET", node.http, "/live/v7/" + ms + ".ts");
  CHECK(unknown.status == 404);
  CHECK(unknown.headers["Cache-Control"] == "max-age=1");

  // L-8: an object further ahead than the next: 404 with a TTL ending at its due time, and no
  // lookup in the object index (L-15 / P-5).
  double lookups = MetricAt(node.http, "meshwork_origin_index_lookups_total");
  int64_t future = producing() + 3;
  int64_t asked = NowMs();
  auto early = Http("GET", node.http, "/live/v1/" + std::to_string(future) + ".ts");
  CHECK(early.status == 404);
  int64_t ttl = std::stoll(early.headers["X-Cache-TTL-Ms"]);
  int64_t due = start + (future + 1) * 2000;
  CHECK(ttl <= due - asked);
  CHECK(ttl >= due - NowMs() - 50);
  CHECK(early.headers["Cache-Control"] == "max-age=" + std::to_string(ttl / 1000));
  // L-9: before the stream's first segment → 410, cacheable for the live window.
  auto gone = Http("GET", node.http, "/live/v1/" + std::to_string(m - 2) + ".ts");
  CHECK(gone.status == 410);
  CHECK(gone.headers["Cache-Control"] == "max-age=8");
  CHECK(MetricAt(node.http, "meshwork_origin_index_lookups_total") == lookups);

  // L-7: the next due object is held and answered the instant it is published.
  int64_t next = producing();
  std::string path = "/live/v1/" + std::to_string(next) + ".ts";
  double held_before = MetricAt(node.http, "meshwork_origin_reads_total", "answer=\"held\"");
  auto waiting = std::async(std::launch::async, [&] { return Http("GET", node.http, path); });
  REQUIRE(Eventually(
      [&] {
        return MetricAt(node.http, "meshwork_origin_reads_total", "answer=\"held\"") > held_before;
      },
      3s));
  // L-2: a broken upload of that object leaves nothing visible; the held read keeps waiting.
  BrokenUpload(node.publish, path);
  CHECK(waiting.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
  // L-10: a notification before the publish marks it.
  auto note = Http("POST", node.publish, "/live/notifications",
                   R"({"id": "ev-1", "type": "ad-start", "payload": {"duration": 30}})");
  CHECK(note.status == 200);
  CHECK(note.Json()["seq"] == 1);
  CHECK(Http("POST", node.publish, "/live/notifications", R"({"type": "x"})")
            .Json()["error"]["field"] == "id");
  REQUIRE(PutObject(node, path, "fresh", "b").status == 201);
  auto released = waiting.get();
  CHECK(released.status == 200);
  CHECK(released.body == "fresh");
  CHECK(released.headers["X-Pipeline"] == "b");
  CHECK_FALSE(released.headers["X-Stream-Notifications"].empty());
  auto playlist = Http("GET", node.http, "/live/v1/index.m3u8");
  REQUIRE(playlist.status == 200);
  CHECK(playlist.headers["X-Stream-Notifications"] == released.headers["X-Stream-Notifications"]);
  CHECK(playlist.body.find(ms + ".ts?v=1\n") != std::string::npos);

  // The object size limit: 413, nothing stored, the node alive.
  auto big = PutObject(node, "/live/v1/" + std::to_string(next + 1) + ".ts",
                       std::string(300'000, 'x'), "a");
  CHECK(big.status == 413);
  CHECK(Http("GET", node.http, "/whoami").status == 200);

  // L-13: a mask from central hides pipeline a's candidate on the node; DELETE restores it.
  auto mask = Http("POST", central.http, "/central/api-v4/streams/live/masks",
                   nlohmann::json({{"pipeline", "a"}, {"from_msn", m}, {"to_msn", m}}).dump());
  REQUIRE(mask.status == 201);
  // Pipeline b's candidate (published first) takes over.
  CHECK(Eventually([&] { return Http("GET", node.http, "/live/v1/" + ms + ".ts").body == "first"; },
                   5s));
  REQUIRE(Http("DELETE", central.http,
               "/central/api-v4/streams/live/masks/" + mask.Json()["id"].get<std::string>())
              .status == 204);
  CHECK(Eventually([&] { return Http("GET", node.http, "/live/v1/" + ms + ".ts").body == "third"; },
                   5s));

  // L-14: invalidation changes the object URLs in the playlist and the ETag.
  REQUIRE(Http("POST", central.http, "/central/api-v4/streams/live/invalidate").status == 200);
  CHECK(Eventually(
      [&] {
        return Http("GET", node.http, "/live/v1/index.m3u8").body.find(ms + ".ts?v=2\n") !=
               std::string::npos;
      },
      5s));
  auto after = Http("GET", node.http, "/live/v1/" + ms + ".ts?v=2");
  CHECK(after.status == 200);
  CHECK(after.headers["ETag"] != etag);
  // A conditional GET with the current ETag: 304.
  CHECK(Http("GET", node.http, "/live/v1/" + ms + ".ts", "",
             {{"If-None-Match", after.headers["ETag"]}})
            .status == 304);
  // L-7 L-9: the next object of a stream whose source stopped (never published): held until
  // the first hold's end (a segment and the retry deadline), then 404 — not held afresh at
  // each wake-up (it was held 8 times over, ~32 s).
  {
    auto asked_at = std::chrono::steady_clock::now();
    auto stopped =
        Http("GET", node.http, "/live/v1/" + std::to_string(next + 1) + ".ts", "", {}, 40s);
    auto took = std::chrono::steady_clock::now() - asked_at;
    CHECK(stopped.status == 404);
    CHECK(took < 8s);
  }
  // L-18: nothing here was slow.
  CHECK(MetricAt(node.http, "meshwork_slow_publish_total") == 0);
}

TEST_CASE("L-3 L-18 publishes are acknowledged in time while viewers keep the node busy",
          "[2slots]") {
  auto origin = StartLiveOrigin("isolation", {});
  const auto& node = origin.node;
  auto producing = [&] { return origin.Producing(); };
  REQUIRE(PutObject(node, "/live/v1/" + std::to_string(producing() - 1) + ".ts", "x", "a").status ==
          201);

  // Viewers: three clients asking for the playlist, a listed segment and a future one (404 +
  // TTL) as fast as they can, one connection per request, for as long as the publisher runs.
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0};
  std::vector<std::thread> viewers;
  for (int i = 0; i < 3; ++i) {
    viewers.emplace_back([&] {
      while (!stop) {
        for (std::string path : {std::string("/live/v1/index.m3u8"),
                                 "/live/v1/" + std::to_string(producing() - 1) + ".ts",
                                 "/live/v1/" + std::to_string(producing() + 3) + ".ts"}) {
          if (Http("GET", node.http, path, "", {}, 2s).status != 0) ++answered;
        }
      }
    });
  }
  // The publisher: 30 objects of 256 KiB, both pipelines in turn, over the publish listener.
  const std::string body(256 * 1024, 'p');
  const int answered_before = answered;
  int acknowledged = 0;
  for (int i = 0; i < 30; ++i) {
    auto put = PutObject(node, "/live/v1/" + std::to_string(producing() - 1) + ".ts", body,
                         i % 2 ? "b" : "a");
    INFO(i << ": " << put.status << " " << put.body);
    CHECK((put.status == 201 || put.status == 204));
    acknowledged += put.status == 201 || put.status == 204;
  }
  const int answered_during = answered - answered_before;
  stop = true;
  for (auto& t : viewers) t.join();
  INFO("viewer answers during the publishes: " << answered_during);
  CHECK(answered_during >= 30);  // the viewers were busy the whole time
  CHECK(acknowledged == 30);
  // L-18: no acknowledgement came later than its budget after the body's last byte.
  CHECK(MetricAt(node.http, "meshwork_slow_publish_total") == 0);
  CHECK(MetricAt(node.http, "meshwork_publish_ack_seconds_count") >= 30);
}

TEST_CASE("Z-23 a central listener with delivery: proxy answers with the node's own answer") {
  auto dir = MakeTempDir("z23-proxy");
  auto central = StartCentral(dir, "127.0.0.1:0", "127.0.0.1:0",
                              {"--http-delivery=proxy", "--proxy-timeout-ms=3000"});
  // Z-10: viewers are routed to edges and ingest nodes, never origins; an ingest node takes
  // published objects too.
  auto node = StartStreamer(central.grpc, "ingest-1", "ingest");
  const int64_t start = NowMs() - 10'500;
  nlohmann::json stream = {{"placement", {{"streamers", {"ingest-1"}}}},
                           {"segment_ms", 2000},
                           {"pipelines", {"a"}},
                           {"template", {{"availability_start", start}}}};
  REQUIRE(Http("PUT", central.http, kApi + "/streams/live", stream.dump()).status == 201);
  REQUIRE(Eventually(
      [&] { return PutObject(node, "/live/v1/init.mp4", "init-bytes", "a").status == 201; }, 10s));
  REQUIRE(Eventually([&] { return IsOnline(central, "ingest-1"); }, 10s));
  const std::string segment = "/live/v1/" + std::to_string((NowMs() - start) / 2000 - 1) + ".ts";
  REQUIRE(PutObject(node, segment, "0123456789", "a").status == 201);

  // The object: the node's status, body and fields, with Via, and no redirect.
  auto direct = Http("GET", node.http, segment);
  HttpResult proxied;
  CHECK(Eventually(
      [&] {
        proxied = Http("GET", central.http, segment + "?t=1");
        return proxied.status == 200;
      },
      5s));
  INFO(proxied.status << " " << proxied.body);
  CHECK(proxied.body == "0123456789");
  CHECK(proxied.headers["ETag"] == direct.headers["ETag"]);
  CHECK(proxied.headers["Cache-Control"] == direct.headers["Cache-Control"]);
  CHECK(proxied.headers["Via"] == "1.1 meshwork-central");
  CHECK(proxied.headers.count("Location") == 0);
  // The viewer's Range and validators reach the node.
  auto part = Http("GET", central.http, segment, "", {{"Range", "bytes=2-4"}});
  CHECK(part.status == 206);
  CHECK(part.body == "234");
  CHECK(
      Http("GET", central.http, segment, "", {{"If-None-Match", direct.headers["ETag"]}}).status ==
      304);
  // The node's refusals come through as they are: 404 with its TTL for a future object.
  auto early =
      Http("GET", central.http, "/live/v1/" + std::to_string((NowMs() - start) / 2000 + 3) + ".ts");
  CHECK(early.status == 404);
  CHECK_FALSE(early.headers["X-Cache-TTL-Ms"].empty());
  // Central's own answers are unchanged: an unknown stream is central's 404.
  CHECK(Http("GET", central.http, "/nosuch/index.m3u8").status == 404);
  CHECK(MetricAt(central.http, "meshwork_central_proxied_total", "result=\"answered\"") >= 4);

  // A node that stops answering: 504, not naming it (the nodes stay out of the viewer's
  // sight), until central takes it offline.
  node.process->Stop();
  auto stuck = Http("GET", central.http, segment);
  node.process->Signal(SIGCONT);
  CHECK(stuck.status == 504);
  CHECK(stuck.Json()["error"]["code"] == "gateway_timeout");
  CHECK(stuck.body.find(node.http) == std::string::npos);  // host:port
  CHECK(stuck.body.find("127.0.0.1") == std::string::npos);
  CHECK(MetricAt(central.http, "meshwork_central_proxied_total", "result=\"node_failed\"") == 1);
}

}  // namespace
}  // namespace meshwork::testing
