// A-6, A-7 (spec 09) with a real auth backend process (tests/e2e/auth_backend.py): allow, deny
// with its reason, a timeout under on_error deny and allow, an answer outside the protocol, and
// 1 000 new sessions from 100 concurrent clients — one call per session, the node's workers
// never blocked meanwhile.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/harness.h"
#include "tests/integration/media_harness.h"
#include "tests/test_paths.h"

// A namespace of its own: integration tests compile in batches.
namespace meshwork::testing::access_backend_test {

std::vector<std::pair<std::string, std::string>> ClusterBearer() {
  return {{"Authorization", "Bearer " + ClusterToken()}};
}

std::string ReasonOf(const HttpResult& r) {
  auto body = r.Json();
  return body.is_object() ? body["error"].value("reason", "") : "";
}

struct Backend {
  std::unique_ptr<Process> process;
  std::string address;
  // The backend's record: calls per session id, and the most it held at once.
  nlohmann::json Calls() const { return Http("GET", address, "/calls").Json(); }
};

// Returns once `node` serves stream "private"'s media playlist to the cluster.
void WaitPackaging(const Streamer& node) {
  REQUIRE(Eventually(
      [&] {
        return Http("GET", node.http, "/private/v1/index.m3u8", "", ClusterBearer()).status == 200;
      },
      30s));
}

// `tls`: {certificate, key} for HTTPS, or empty.
Backend StartBackend(const std::string& dir, double delay_s,
                     const std::vector<std::string>& tls = {}) {
  Backend b;
  std::vector<std::string> argv = {"/usr/bin/python3", SourcePath("tests/e2e/auth_backend.py"),
                                   "--delay", absl::StrCat(delay_s)};
  if (!tls.empty()) argv.insert(argv.end(), {"--tls", tls[0], tls[1]});
  b.process = Process::Start(argv, dir + "/backend.log");
  b.address = absl::StrCat("127.0.0.1:", b.process->WaitReady()["port"].get<int>());
  return b;
}

// The stream's access policy asking `backend` (timeout 1.5 s; every answer takes 0.5 s) at
// `url` (default http://ADDRESS/auth).
std::string Policy(const Backend& backend, const std::string& on_error, std::string url = "") {
  if (url.empty()) url = "http://" + backend.address + "/auth";
  return nlohmann::json{
      {"access",
       {{"mode", "backend"},
        {"backend", {{"url", url}, {"timeout_ms", 1500}, {"on_error", on_error}}}}}}
      .dump();
}

TEST_CASE(
    "A-6 A-7 a real auth backend admits, refuses with its reason, times out under on_error deny "
    "and allow, and is asked once per session by 1 000 new sessions from 100 concurrent clients "
    "while the node's workers stay free",
    "[2slots]") {
  const std::string dir = MakeTempDir("access-backend");
  Backend backend = StartBackend(dir, 0.5);
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "private");
  auto patch = Http("PATCH", central.http, kApi + "/streams/private", Policy(backend, "deny"));
  INFO(patch.body);
  REQUIRE(patch.status == 200);
  auto push = PushFile(SourceTs(60), ingest.publish, "private");
  WaitPackaging(ingest);
  const std::string node = ingest.http;
  REQUIRE(Eventually(
      [&] { return ReasonOf(Http("GET", node, "/private/index.m3u8?token=deny")) != ""; }, 10s));

  // Allow: the backend's login; the token carried into the playlist's URIs.
  // (A user agent of its own: a play session is a client, stream and user agent, S-18.)
  const std::vector<std::pair<std::string, std::string>> bob = {{"User-Agent", "player-bob"}};
  auto allowed = Http("GET", node, "/private/index.m3u8?token=allow-bob", "", bob);
  INFO(allowed.body);
  REQUIRE(allowed.status == 200);
  CHECK(allowed.body.find("?token=allow-bob") != std::string::npos);
  CHECK(Http("GET", node, "/private/v1/index.m3u8?token=allow-bob", "", bob).status == 200);
  // The login the backend named is the session's.
  CHECK(Eventually(
      [&] {
        // The session stays active meanwhile.
        Http("GET", node, "/private/v1/index.m3u8?token=allow-bob", "", bob);
        auto list = Http("GET", central.http, kApi + "/sessions?login=bob");
        return list.status == 200 && list.Json()["sessions"].size() == 1;
      },
      10s));
  // Deny: 403 with the backend's reason.
  auto denied = Http("GET", node, "/private/index.m3u8?token=deny");
  CHECK(denied.status == 403);
  CHECK(ReasonOf(denied) == "not_subscribed");
  // An answer outside the protocol, and a timeout (the backend takes 3.5 s, the policy 1.5 s):
  // on_error deny refuses.
  CHECK(ReasonOf(Http("GET", node, "/private/index.m3u8?token=broken")) == "backend_error");
  auto slow = Http("GET", node, "/private/index.m3u8?token=slow-1", "", {}, 10s);
  CHECK(slow.status == 403);
  CHECK(ReasonOf(slow) == "backend_error");
  // on_error allow admits instead (a new token: the error above is kept for a few seconds).
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/private", Policy(backend, "allow")).status ==
          200);
  int attempt = 2;
  CHECK(Eventually(
      [&] {
        auto target = "/private/index.m3u8?token=slow-" + std::to_string(attempt++);
        return Http("GET", node, target, "", {}, 10s).status == 200;
      },
      20s));

  // Back to on_error deny: below, a call that fails is a viewer refused.
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/private", Policy(backend, "deny")).status ==
          200);
  CHECK(Eventually(
      [&] {
        auto target = "/private/index.m3u8?token=broken-" + std::to_string(attempt++);
        return ReasonOf(Http("GET", node, target)) == "backend_error";
      },
      10s));

  // 1 000 new sessions from 100 concurrent clients, each session's first two requests sent at
  // once; meanwhile a cluster-token reader measures the node's answers to a playlist.
  auto AskedMore = [](const nlohmann::json& record) {  // sessions asked more than once
    int n = 0;
    for (const auto& [id, count] : record["calls"].items()) n += count.get<int>() > 1;
    return n;
  };
  auto previous = backend.Calls();  // (refusals and errors are asked again after 5 s)
  auto before = previous["calls"].size();
  std::atomic<int> ok{0}, failed{0};
  std::atomic<bool> loading{true};
  std::vector<double> latencies;
  std::thread reader([&] {
    while (loading) {
      auto start = std::chrono::steady_clock::now();
      auto r = Http("GET", node, "/private/v1/index.m3u8", "", ClusterBearer());
      if (r.status == 200) {
        latencies.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      std::this_thread::sleep_for(20ms);
    }
  });
  std::vector<std::thread> clients;
  for (int c = 0; c < 100; ++c) {
    clients.emplace_back([&, c] {
      for (int s = 0; s < 10; ++s) {
        const std::string target =
            absl::StrCat("/private/index.m3u8?token=allow-viewer-", c, "-", s);
        std::thread twin(
            [&] { (Http("GET", node, target, "", {}, 20s).status == 200 ? ok : failed)++; });
        (Http("GET", node, target, "", {}, 20s).status == 200 ? ok : failed)++;
        twin.join();
      }
    });
  }
  for (auto& t : clients) t.join();
  loading = false;
  reader.join();
  CHECK(ok == 2000);
  CHECK(failed == 0);
  auto record = backend.Calls();
  INFO(record.dump());
  // One call per session: 1 000 new session ids, each asked once.
  CHECK(record["calls"].size() - before == 1000);
  CHECK(AskedMore(record) == AskedMore(previous));
  // The node held many calls at once (asynchronous), and never blocked its workers: with every
  // call taking 0.5 s, a blocked worker would hold the reader's answers for as long.
  CHECK(record["max_in_flight"].get<int>() >= 20);
  REQUIRE(latencies.size() >= 10);
  std::sort(latencies.begin(), latencies.end());
  double median = latencies[latencies.size() / 2];
  INFO("reader median " << median << " s over " << latencies.size() << " answers");
  CHECK(median < 0.25);
  CHECK(MetricAt(node, "meshwork_access_backend_calls_total", "result=\"admit\"") >= 1000);
  CHECK(MetricAt(node, "meshwork_access_backend_calls_total", "result=\"timeout\"") >= 1);
}

TEST_CASE(
    "A-6 an https:// backend is called over TLS with its certificate verified: a name the "
    "certificate does not hold is a backend error") {
  const std::string dir = MakeTempDir("access-backend-tls");
  // A self-signed certificate for 127.0.0.1 only, which the node trusts by its CA file.
  auto [made, out] = RunCommand(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=backend -addext "
      "subjectAltName=IP:127.0.0.1 -keyout '" +
      dir + "/key.pem' -out '" + dir + "/cert.pem' 2>&1");
  INFO(out);
  REQUIRE(made == 0);
  Backend backend = StartBackend(dir, 0, {dir + "/cert.pem", dir + "/key.pem"});
  Central central = StartCentral(dir + "/db");
  Streamer ingest = StartIngestWithStream(central, "ingest-1", "private", {"publish://"},
                                          {"--access_backend_ca_file=" + dir + "/cert.pem"});
  const std::string port = backend.address.substr(backend.address.rfind(':') + 1);
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/private",
               Policy(backend, "deny", "https://127.0.0.1:" + port + "/auth"))
              .status == 200);
  auto push = PushFile(SourceTs(60), ingest.publish, "private");
  WaitPackaging(ingest);
  // Over TLS: the backend's refusal reason and its admission both reach the viewer.
  CHECK(Eventually(
      [&] {
        return ReasonOf(Http("GET", ingest.http, "/private/index.m3u8?token=deny")) ==
               "not_subscribed";
      },
      10s));
  CHECK(Http("GET", ingest.http, "/private/index.m3u8?token=allow-tls").status == 200);
  // The same backend by a name its certificate does not hold: refused as a backend error.
  REQUIRE(Http("PATCH", central.http, kApi + "/streams/private",
               Policy(backend, "deny", "https://localhost:" + port + "/auth"))
              .status == 200);
  CHECK(Eventually(
      [&] {
        return ReasonOf(Http("GET", ingest.http, "/private/index.m3u8?token=allow-other")) ==
               "backend_error";
      },
      10s));
  CHECK(MetricAt(ingest.http, "meshwork_access_backend_calls_total", "result=\"admit\"") >= 1);
  CHECK(MetricAt(ingest.http, "meshwork_access_backend_calls_total", "result=\"error\"") >= 1);
}

}  // namespace meshwork::testing::access_backend_test
