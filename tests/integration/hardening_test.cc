// Hostile clients against the real binaries (R-3, M-3): a deep JSON body, request smuggling,
// a second publisher, stalled uploads, bad chunking, Date, and a shutdown with held requests.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/media_harness.h"
#include "tests/raw_connection.h"

namespace meshwork::testing {
namespace {

// {"member": {"a": {"a": … {}}}} nested `depth` objects deep.
std::string DeepBody(const std::string& member, int depth) {
  std::string body = "{\"" + member + "\":";
  for (int i = 0; i < depth; ++i) body += "{\"a\":";
  body += "{}";
  body.append(depth, '}');
  return body + "}";
}

// Whether a child still runs (not exited, not reaped): Process::running() only knows after
// Wait(). Reaps the child when it has exited.
bool Alive(Process& process) {
  int status = 0;
  return waitpid(process.pid(), &status, WNOHANG) == 0;
}

// Resident memory of a process, in bytes (from /proc).
uint64_t ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

TEST_CASE("R-3 a PATCH or PUT nested 100 000 deep is a clean 400 and central stays up") {
  auto dir = MakeTempDir("deep");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "edge-1");
  REQUIRE(Http("PUT", central.http, kApi + "/zones/z", R"({"routes": ["10.0.0.0/8"]})").status ==
          201);
  REQUIRE(Http("PUT", central.http, kApi + "/streams/s", "{}").status == 201);
  REQUIRE(Eventually(
      [&] { return Http("GET", central.http, kApi + "/streamers/edge-1").status == 200; }, 10s));
  struct Target {
    std::string path, member;
  };
  for (const auto& t : {Target{"/zones/z", "fallback_zone"}, Target{"/streams/s", "ott"},
                        Target{"/streams/s", "template"}, Target{"/streamers/edge-1", "zone"}}) {
    for (std::string method : {"PATCH", "PUT"}) {
      INFO(method << " " << t.path << " " << t.member);
      auto before = Http("GET", central.http, kApi + t.path);
      auto r = Http(method, central.http, kApi + t.path, DeepBody(t.member, 100'000));
      CHECK(r.status == 400);
      CHECK(r.Json()["error"]["field"] == "body");
      CHECK(r.body.find("nested deeper than") != std::string::npos);
      auto after = Http("GET", central.http, kApi + t.path);
      CHECK(after.status == 200);
      CHECK(after.body == before.body);  // nothing written
    }
  }
  CHECK(Alive(*central.process));
  CHECK(Http("GET", central.http, kApi + "/zones").status == 200);
}

// Sends a POST/PUT whose body is a second request, framed so that a lax parser would run it.
void ExpectNoSmuggling(const std::string& address, const std::string& method,
                       const std::string& path) {
  const std::string smuggled = "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n";
  for (std::string framing : std::vector<std::string>{
           "Transfer-Encoding: identity\r\n", "Transfer-Encoding: xchunked\r\n",
           "Transfer-Encoding: chunked, identity\r\n",
           "Transfer-Encoding: xchunked\r\nContent-Length: " + std::to_string(smuggled.size()) +
               "\r\n"}) {
    INFO(address << " " << method << " " << path << " with " << framing);
    RawConnection conn(Port(address));
    conn.Write(method + " " + path + " HTTP/1.1\r\nHost: a\r\n" + framing + "\r\n" + smuggled);
    auto response = conn.Read();
    REQUIRE(response);
    CHECK(response->result_int() == 400);
    CHECK(response->find(boost::beast::http::field::date) != response->end());
    CHECK(conn.ClosedByPeer());  // and the smuggled GET never answered
  }
}

TEST_CASE("R-3 no request smuggling on central, viewer and publish listeners") {
  auto dir = MakeTempDir("smuggle");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "sm");
  ExpectNoSmuggling(central.http, "PATCH", kApi + "/config");
  ExpectNoSmuggling(node.http, "POST", "/sm/index.m3u8");
  ExpectNoSmuggling(node.publish, "PUT", "/sm/publish");
  ExpectNoSmuggling(node.publish, "PUT", "/sm/v1/1.ts");
}

TEST_CASE("R-3 malformed chunking on the publish listener answers 400") {
  auto dir = MakeTempDir("badchunk");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "bc");
  for (std::string path : {"/bc/publish", "/bc/v1/1.ts"}) {
    INFO(path);
    RawConnection conn(Port(node.publish));
    conn.Write("PUT " + path +
               " HTTP/1.1\r\nHost: a\r\nX-Pipeline: a\r\nTransfer-Encoding: chunked\r\n\r\n"
               "4\r\nabcd\r\nnot-hex\r\n");
    auto response = conn.Read();
    REQUIRE(response);
    CHECK(response->result_int() == 400);
    CHECK(response->body().find("malformed request body") != std::string::npos);
  }
  // A chunk declared 2^64 − 1 bytes long: refused at its header, not waited for.
  for (std::string path : {"/bc/publish", "/bc/v1/2.ts"}) {
    INFO(path);
    RawConnection conn(Port(node.publish));
    conn.Write("PUT " + path +
               " HTTP/1.1\r\nHost: a\r\nX-Pipeline: a\r\nTransfer-Encoding: chunked\r\n\r\n"
               "FFFFFFFFFFFFFFFF\r\nabcd");
    auto response = conn.Read(1000ms);
    REQUIRE(response);
    CHECK(response->result_int() == 400);
    CHECK(conn.ClosedByPeer(1000ms));
  }
}

TEST_CASE("M-3 a second publisher of a live push gets 409 and the first keeps publishing") {
  auto dir = MakeTempDir("second");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "live");
  auto push = PushFile(SourceTs(40), node.publish, "live", {"-t", "30"});
  REQUIRE(
      Eventually([&] { return Http("GET", node.http, "/live/v1/index.m3u8").status == 200; }, 20s));
  // An empty PUT, and one carrying bytes: both refused, neither cuts the encoder.
  CHECK(Http("PUT", node.publish, "/live/publish", "").status == 409);
  auto second = Http("PUT", node.publish, "/live/publish", std::string(188 * 10, 'G'));
  CHECK(second.status == 409);
  CHECK(second.Json()["error"]["message"].get<std::string>().find("live publisher") !=
        std::string::npos);
  auto before = ParseMediaPlaylist(Http("GET", node.http, "/live/v1/index.m3u8").body);
  REQUIRE(!before.entries.empty());
  REQUIRE(Eventually(
      [&] {
        auto now = ParseMediaPlaylist(Http("GET", node.http, "/live/v1/index.m3u8").body);
        return !now.entries.empty() && now.entries.back().msn > before.entries.back().msn;
      },
      10s));
  CHECK(Alive(*push));
}

TEST_CASE("M-3 with publish tokens: none → 401, the token takes over a live push") {
  auto dir = MakeTempDir("tokens");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "tok");
  const std::string token = "publish-token-0123456789";
  auto stream = Http("GET", central.http, kApi + "/streams/tok").Json();
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/tok",
               nlohmann::json{{"publish_tokens", {token}}}.dump())
              .status == 200);
  // Applied on the node once an anonymous publish is refused.
  REQUIRE(
      Eventually([&] { return Http("PUT", node.publish, "/tok/publish", "").status == 401; }, 10s));
  auto refused = Http("PUT", node.publish, "/tok/publish", "");
  CHECK(refused.headers["WWW-Authenticate"].find("Bearer") == 0);
  CHECK(Http("PUT", node.publish, "/tok/publish", "",
             {{"Authorization", "Bearer wrong-token-xxxxxx"}})
            .status == 401);
  CHECK(Http("PUT", node.publish, "/tok/v1/1.ts", "x", {{"X-Pipeline", "a"}}).status == 401);

  auto push = PushFile(SourceTs(40), node.publish, "tok", {"-t", "30"},
                       {"-headers", "Authorization: Bearer " + token + "\r\n"});
  REQUIRE(
      Eventually([&] { return Http("GET", node.http, "/tok/v1/index.m3u8").status == 200; }, 20s));
  // Without the token a second publisher is refused; with it (as ?token=) it takes over and
  // the first one's connection is answered and closed.
  CHECK(Http("PUT", node.publish, "/tok/publish", "").status == 401);
  REQUIRE(Alive(*push));
  RawConnection takeover(Port(node.publish));
  takeover.Write("PUT /tok/publish?token=" + token +
                 " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(Eventually([&] { return !Alive(*push); }, 10s));  // ffmpeg: broken pipe
  takeover.Write("0\r\n\r\n");
  auto ended = takeover.Read();
  REQUIRE(ended);
  CHECK(ended->result_int() == 204);
}

TEST_CASE("R-3 32 stalled uploads stay within the publish listener's byte cap", "[rss]") {
  auto dir = MakeTempDir("stalled");
  auto central = StartCentral(dir);
  constexpr uint64_t kCap = 64ull << 20;
  auto node = StartStreamer(central.grpc, "origin-1", "origin",
                            {"--max-buffered-upload-bytes=" + std::to_string(kCap)});
  REQUIRE(Http("PUT", central.http, kApi + "/streams/up",
               R"({"placement": {"streamers": ["origin-1"]}})")
              .status == 201);
  REQUIRE(Eventually(
      [&] {
        return Http("PUT", node.publish, "/up/v1/0.ts", "x", {{"X-Pipeline", "a"}}).status / 100 ==
               2;
      },
      10s));
  uint64_t baseline = ResidentBytes(node.process->pid());
  // Each declares 16 MiB, sends 4 MiB and stalls: 128 MiB offered against a 64 MiB cap.
  const std::string piece(4 << 20, 'u');
  std::vector<std::unique_ptr<RawConnection>> uploads;
  int refused = 0;
  for (int i = 0; i < 32; ++i) {
    auto conn = std::make_unique<RawConnection>(Port(node.publish));
    conn->Write("PUT /up/v1/" + std::to_string(i + 1) +
                ".ts HTTP/1.1\r\nHost: a\r\nX-Pipeline: a\r\nContent-Length: " +
                std::to_string(16 << 20) + "\r\n\r\n");
    conn->WriteFor(piece, 2s);
    uploads.push_back(std::move(conn));
  }
  for (auto& conn : uploads) {
    auto r = conn->Read(200ms);
    if (r && r->result_int() == 503) {
      ++refused;
      CHECK((*r)[boost::beast::http::field::retry_after] == "1");
    }
  }
  uint64_t grown = ResidentBytes(node.process->pid()) - baseline;
  double held = MetricAt(node.publish, "meshwork_http_buffered_body_bytes", "listener=\"publish\"");
  INFO("refused " << refused << ", resident +" << (grown >> 20) << " MiB, held " << held);
  CHECK(refused >= 14);  // at most 16 × 4 MiB fit
  CHECK(held <= static_cast<double>(kCap));
  // [rss]: ASan's quarantine is off for this test (tests/CMakeLists.txt), so the bound holds
  // in the sanitized build too.
  CHECK(grown < kCap + (48ull << 20));
  CHECK(Alive(*node.process));
  // Dropping the stalled uploads gives the bytes back.
  uploads.clear();
  CHECK(Eventually(
      [&] {
        return MetricAt(node.publish, "meshwork_http_buffered_body_bytes",
                        "listener=\"publish\"") == 0;
      },
      10s));
}

TEST_CASE("R-3 an object upload trickled past --max-upload-ms is 408, the node unharmed") {
  auto dir = MakeTempDir("trickle");
  auto central = StartCentral(dir);
  auto node = StartStreamer(central.grpc, "origin-1", "origin", {"--max-upload-ms=1000"});
  REQUIRE(Http("PUT", central.http, kApi + "/streams/tr",
               R"({"placement": {"streamers": ["origin-1"]}})")
              .status == 201);
  REQUIRE(Eventually(
      [&] {
        return Http("PUT", node.publish, "/tr/v1/0.ts", "x", {{"X-Pipeline", "a"}}).status / 100 ==
               2;
      },
      10s));
  // One byte every 200 ms: each well within the listener's read timeout, the whole past 1 s.
  RawConnection conn(Port(node.publish));
  conn.Write(
      "PUT /tr/v1/1.ts HTTP/1.1\r\nHost: a\r\nX-Pipeline: a\r\nTransfer-Encoding: "
      "chunked\r\n\r\n");
  auto start = std::chrono::steady_clock::now();
  try {
    while (std::chrono::steady_clock::now() - start < 2s) {
      conn.Write("1\r\nu\r\n");
      std::this_thread::sleep_for(200ms);  // the client's pace, not a wait for the server
    }
  } catch (const std::exception&) {
    // The node may close once it answered and lingered: the answer is read below.
  }
  auto response = conn.Read(5s);
  REQUIRE(response);
  CHECK(response->result_int() == 408);
  CHECK(response->body().find("--max-upload-ms") != std::string::npos);
  CHECK(MetricAt(node.publish, "meshwork_origin_publishes_total", "result=\"too_slow\"") == 1);
  // Nothing of it was published (a prompt upload of the same object creates it, 201).
  CHECK(Http("PUT", node.publish, "/tr/v1/1.ts", "y", {{"X-Pipeline", "a"}}).status == 201);
}

TEST_CASE("R-3 a streamer stopping with 1 000 held requests exits cleanly") {
  auto dir = MakeTempDir("heldstop");
  auto central = StartCentral(dir);
  auto node = StartIngestWithStream(central, "ingest-1", "held");
  auto push = PushFile(SourceTs(40), node.publish, "held", {"-t", "30"});
  int64_t edge = -1;
  REQUIRE(Eventually(
      [&] {
        auto r = Http("GET", node.http, "/held/v1/index.m3u8");
        if (r.status != 200) return false;
        auto p = ParseMediaPlaylist(r.body);
        if (p.entries.empty()) return false;
        edge = p.entries.back().msn;
        return true;
      },
      20s));
  push->Signal(SIGKILL);  // nothing more is published: every blocking reload below waits
  push->Wait();
  std::vector<std::unique_ptr<RawConnection>> held;
  const std::string request = "GET /held/v1/index.ll.m3u8?_HLS_msn=" + std::to_string(edge + 2) +
                              " HTTP/1.1\r\nHost: a\r\n\r\n";
  for (int i = 0; i < 1000; ++i) {
    held.push_back(std::make_unique<RawConnection>(Port(node.http)));
    held.back()->Write(request);
  }
  CHECK_FALSE(held.back()->Read(200ms));  // still held
  node.process->Signal(SIGTERM);
  int status = node.process->Wait();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream log(node.process->log_path());
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(text.find("Sanitizer") == std::string::npos);
}

}  // namespace
}  // namespace meshwork::testing
