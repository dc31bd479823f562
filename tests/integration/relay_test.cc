// Edge relay (S-19, S-20) with real processes: central, an ingest node packaging an ffmpeg
// push, and an edge that serves the stream it does not package by relaying it into its own
// store. Upstream requests are counted from the edge's metrics.
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "tests/integration/black_hole.h"
#include "tests/integration/media_harness.h"

namespace meshwork::testing {
namespace {

// The value of an unlabelled counter in a Prometheus text page; −1 when absent.
double Counter(const std::string& metrics, const std::string& name) {
  std::smatch m;
  if (std::regex_search(metrics, m, std::regex("\n" + name + " ([0-9.e+]+)"))) {
    return std::stod(m[1]);
  }
  return -1;
}

double UpstreamRequests(const Streamer& edge) {
  return Counter(Http("GET", edge.http, "/metrics").body, "meshwork_relay_upstream_requests_total");
}

// Central, an ingest node packaging an ffmpeg push of stream "live", and an edge that does
// not hold it; returns once the ingest lists a segment.
struct EdgeSetup {
  Central central;
  Streamer ingest;
  Streamer edge;
  std::unique_ptr<Process> push;
};
EdgeSetup StartEdgeSetup(const std::string& tag) {
  EdgeSetup k;
  k.central = StartCentral(MakeTempDir(tag));
  // Issue 30 internal addresses: the ingest's public name does not resolve; the edge reaches
  // it only at its internal address.
  k.ingest = StartIngestWithStream(
      k.central, "ingest-1", "live", {"publish://"},
      {"--hostname", "ingest-1.public.invalid", "--internal_address", "127.0.0.1"});
  k.edge = StartStreamer(k.central.grpc, "edge-1", "edge");
  k.push = PushFile(SourceTs(60), k.ingest.publish, "live");
  REQUIRE(Eventually(
      [&] {
        return !SegmentsOf(Http("GET", k.ingest.http, "/live/v1/index.ll.m3u8").body).empty();
      },
      20s));
  return k;
}

TEST_CASE(
    "S-19 S-20 an edge relays a stream placed elsewhere, and concurrent viewers cost one "
    "upstream request per object") {
  auto k = StartEdgeSetup("relay");
  auto& ingest = k.ingest;
  auto& edge = k.edge;

  // Cold start held (issue 30): the first viewers' requests — masters, each rendition's
  // playlist and init, at once — start the relay and are held until what each needs is in
  // (up to three target durations), never answered 404.
  std::vector<std::future<HttpResult>> cold;
  for (const char* path : {"/live/index.ll.m3u8", "/live/index.m3u8", "/live/v1/index.ll.m3u8",
                           "/live/a1/index.ll.m3u8", "/live/v1/index.m3u8", "/live/v1/init.mp4",
                           "/live/a1/init.mp4", "/live/index.mpd"}) {
    cold.push_back(std::async(std::launch::async,
                              [&, path] { return Http("GET", edge.http, path, "", {}, 10s); }));
  }
  for (auto& c : cold) {
    auto r = c.get();
    INFO("cold answer: " << r.status << " " << r.body.substr(0, 300));
    CHECK(r.status == 200);
  }
  // The master held for every rendition lists them all.
  CHECK(Http("GET", edge.http, "/live/index.ll.m3u8").body.find("a1/") != std::string::npos);
  REQUIRE(Eventually([&] { return Http("GET", edge.http, "/live/v1/index.ll.m3u8").status == 200; },
                     20s));
  REQUIRE(Eventually(
      [&] { return SegmentsOf(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body).size() >= 2; },
      15s));

  // The same msns on both nodes mean the same media: the edge's segment is the ingest's,
  // byte for byte.
  auto edge_list = Http("GET", edge.http, "/live/v1/index.ll.m3u8").body;
  auto segments = SegmentsOf(edge_list);
  REQUIRE(!segments.empty());
  int64_t msn = *segments.rbegin();
  auto from_edge = Http("GET", edge.http, "/live/v1/" + std::to_string(msn) + ".m4s");
  auto from_ingest = Http("GET", ingest.http, "/live/v1/" + std::to_string(msn) + ".m4s");
  REQUIRE(from_edge.status == 200);
  CHECK(from_edge.body == from_ingest.body);
  CHECK(Http("GET", edge.http, "/live/v1/init.mp4").body ==
        Http("GET", ingest.http, "/live/v1/init.mp4").body);

  // S-25: the MPEG-TS form is made at the edge from the CMAF segments (v1's video, a1's
  // audio), never fetched: the same msn as the ingest's with the same EXTINF, PDT and first
  // PTS, h264 + aac, a keyframe first, decoding cleanly (bytes may differ).
  auto ts_list = Http("GET", edge.http, "/live/v1/index.m3u8").body;
  INFO("edge v1/index.m3u8: " << ts_list);
  std::smatch ts_match;
  REQUIRE(std::regex_search(ts_list, ts_match, std::regex("\n(\\d+)\\.ts(\\?v=\\d+)?\n")));
  const std::string ts_msn = ts_match[1];
  auto ts_edge = Http("GET", edge.http, "/live/v1/" + ts_msn + ".ts");
  auto ts_ingest = Http("GET", ingest.http, "/live/v1/" + ts_msn + ".ts");
  REQUIRE(ts_edge.status == 200);
  REQUIRE(ts_ingest.status == 200);
  const std::string dir = MakeTempDir("relay-ts");
  auto made = ProbeTs(dir + "/edge.ts", ts_edge.body);
  auto packaged = ProbeTs(dir + "/ingest.ts", ts_ingest.body);
  INFO("edge: " << made.probe.dump() << "\ningest: " << packaged.probe.dump());
  CHECK(made.codecs == "h264,aac");
  CHECK(made.codecs == packaged.codecs);
  CHECK(made.KeyFirst());
  CHECK(made.errors.empty());
  CHECK(std::abs(made.Start() - packaged.Start()) < 0.0001);
  CHECK(std::abs(made.VideoStart() - packaged.VideoStart()) < 0.0001);
  CHECK(std::abs(made.Duration() - packaged.Duration()) < 0.05);
  CHECK(EntryOf(ts_list, ts_msn) ==
        EntryOf(Http("GET", ingest.http, "/live/v1/index.m3u8").body, ts_msn));
  CHECK(MetricAt(edge.http, "meshwork_relay_ts_made_total", "result=\"ok\"") >= 1);
  CHECK(MetricAt(edge.http, "meshwork_relay_ts_made_total", "result=\"failed\"") == 0);
  CHECK(Http("GET", edge.http, "/live/index.m3u8").body.find("v1/index.m3u8") != std::string::npos);
  // S-25, S-16a: the DASH manifest made at the edge is on the ingest's timeline — the same
  // availabilityStartTime, Period (id and start), startNumber and presentationTimeOffset — so
  // a DASH viewer can move between them (the objects' X-Media-Timing carries the run's origin).
  const std::string mpd_edge = Http("GET", edge.http, "/live/index.mpd").body;
  const std::string mpd_ingest = Http("GET", ingest.http, "/live/index.mpd").body;
  CheckSameDashTimeline(mpd_edge, mpd_ingest);
  // S-6, S-21: central gave the edge its upstream's timeline fingerprint (msn:start:duration),
  // which a move to another upstream is checked against.
  auto relays = Http("GET", edge.http, "/status").Json()["relays"];
  REQUIRE(relays.is_array());
  REQUIRE(!relays.empty());
  INFO(relays.dump());
  CHECK(std::regex_match(relays[0].value("upstream_timeline", std::string()),
                         std::regex("[0-9]+:[0-9]+:[0-9]+")));

  // The relay's own pace without viewers (it follows the playlists of v1 and a1), the
  // yardstick for what viewers may add below.
  const double paced_from = UpstreamRequests(edge);
  const auto pace_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(2s);  // a rate needs time to pass; nothing to wait on
  const double per_second =
      (UpstreamRequests(edge) - paced_from) /
      std::chrono::duration<double>(std::chrono::steady_clock::now() - pace_start).count();
  REQUIRE(per_second > 0);

  // 50 viewers ask for the hinted part at once (before it exists): all get the same bytes,
  // and the edge asks its upstream for it once, not 50 times.
  // A hint within its segment (N.0 … N.2 of four 0.5 s parts): the hint past a segment's
  // last part may name a part that never comes (the segment ends there instead; 410).
  std::string hint;
  REQUIRE(Eventually(
      [&] {
        hint = Hint(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body);
        auto dot = hint.find('.');
        return dot != std::string::npos && hint.size() > dot + 1 && hint[dot + 1] <= '2' &&
               hint[dot + 2] == '.';
      },
      5s));
  double before = UpstreamRequests(edge);
  REQUIRE(before > 0);
  const auto viewers_start = std::chrono::steady_clock::now();
  std::vector<std::future<HttpResult>> viewers;
  for (int i = 0; i < 50; ++i) {
    viewers.push_back(std::async(std::launch::async, [&] {
      return Http("GET", edge.http, "/live/v1/" + hint, "", {}, 10s);
    }));
  }
  std::set<std::string> bodies;
  std::map<int, int> statuses;
  std::string last_error;
  int ok = 0;
  for (auto& v : viewers) {
    auto r = v.get();
    ok += r.status == 200;
    ++statuses[r.status];
    if (r.status != 200) last_error = r.body + r.error;
    bodies.insert(r.body);
  }
  std::string status_text;
  for (auto [status, n] : statuses)
    status_text += std::to_string(status) + "×" + std::to_string(n) + " ";
  INFO("hint " << hint << ", statuses: " << status_text << ", last error: " << last_error);
  double after = UpstreamRequests(edge);
  const double viewers_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - viewers_start).count();
  CHECK(ok == 50);
  CHECK(bodies.size() == 1);
  CHECK(*bodies.begin() == Http("GET", ingest.http, "/live/v1/" + hint).body);
  // While the 50 waited, the relay made its usual requests (its own pace over that time) and
  // at most the hinted part of each rendition once more: nothing per viewer, no second copy.
  INFO("upstream requests during the 50 viewers' wait: "
       << after - before << " in " << viewers_s << " s, the relay's pace " << per_second << "/s");
  CHECK(after - before <= per_second * viewers_s + 4);

  // L-10/S-20: a notification posted at the ingest reaches the edge's responses, playlists
  // included, as the ingest's header.
  auto posted = Http("POST", ingest.publish, "/live/notifications",
                     R"({"id":"ad-1","type":"ad-start","payload":{"duration":30}})");
  REQUIRE(posted.status / 100 == 2);
  std::string header;
  REQUIRE(Eventually(
      [&] {
        header =
            Http("GET", ingest.http, "/live/v1/index.ll.m3u8").headers["X-Stream-Notifications"];
        auto at_edge = Http("GET", edge.http, "/live/v1/index.ll.m3u8");
        return !header.empty() && at_edge.headers["X-Stream-Notifications"] == header;
      },
      10s));

  // S-20: out-of-range objects are answered at the edge from the template, not upstream.
  double quiet = UpstreamRequests(edge);
  const auto rejected_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) {
    CHECK(Http("GET", edge.http, "/live/v1/" + std::to_string(msn + 50 + i) + ".m4s").status ==
          404);
    CHECK(Http("GET", edge.http, "/live/v1/" + std::to_string(msn - 500 - i) + ".m4s").status ==
          410);
  }
  double requests_for_rejected = UpstreamRequests(edge) - quiet;
  const double rejected_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - rejected_start).count();
  // The relay keeps following the playlist meanwhile, at its pace; the 40 rejected objects
  // add nothing of their own.
  INFO("upstream requests while 40 objects were rejected: " << requests_for_rejected << " in "
                                                            << rejected_s << " s");
  CHECK(requests_for_rejected <= per_second * rejected_s + 2);

  // L-13, S-19: objects the upstream masks (listed there as gaps, 410 when asked for) are
  // passed over at the edge, which goes on relaying what follows instead of waiting on them.
  const auto ingest_segments = SegmentsOf(Http("GET", ingest.http, "/live/v1/index.ll.m3u8").body);
  REQUIRE(!ingest_segments.empty());
  const int64_t masked_from = *ingest_segments.rbegin() + 2;
  auto masked = Http(
      "POST", k.central.http, "/central/api-v4/streams/live/masks",
      nlohmann::json{{"pipeline", "local"}, {"from_msn", masked_from}, {"to_msn", masked_from + 1}}
          .dump());
  INFO("mask: " << masked.status << " " << masked.body);
  REQUIRE(masked.status == 201);
  CHECK(Eventually(
      [&] {
        auto s = SegmentsOf(Http("GET", edge.http, "/live/v1/index.ll.m3u8").body);
        return !s.empty() && *s.rbegin() >= masked_from + 3;
      },
      20s));
  CHECK(MetricAt(edge.http, "meshwork_relay_objects_passed_over_total") >= 1);
}

// Two ingest nodes with the same source, an edge relaying from one of them under an hls.js
// LL-HLS viewer; `fail` then takes the edge's upstream away. Returns the player's result
// after `fail`, having checked that the edge moved to another node, with
// "stall_after_failure_s": the longest stall that ended after `fail` began (S-21's bound is on
// the move; a stall while hls.js joins the live edge is the start-up's). With `parent_edge`
// (S-26) two edges share an office zone: the player plays from the one that relays from the
// other (the stream's parent edge there), and `fail` takes the parent away.
nlohmann::json UpstreamFailsUnderPlayer(const std::function<void(Streamer& upstream)>& fail,
                                        bool parent_edge = false) {
  auto dir = MakeTempDir("relay-failover");
  auto central = StartCentral(dir);
  auto a = StartIngestWithStream(central, "ingest-a", "live");
  auto b = StartIngestWithStream(central, "ingest-b", "live");
  auto edge_1 = StartStreamer(central.grpc, "edge-1", "edge");
  Streamer edge_2;
  if (parent_edge) {
    edge_2 = StartStreamer(central.grpc, "edge-2", "edge");
    for (const auto& [method, path, body] :
         {std::tuple{"PUT", "zones/office", R"({"routes": []})"},
          std::tuple{"PATCH", "streamers/edge-1", R"({"zone": "office"})"},
          std::tuple{"PATCH", "streamers/edge-2", R"({"zone": "office"})"}}) {
      // A node's streamer object appears once its registration is through.
      REQUIRE(Eventually(
          [&] {
            return Http(method, central.http, std::string("/central/api-v4/") + path, body).status /
                       100 ==
                   2;
          },
          10s));
    }
  }
  // The same source into both at once: the same timeline (S-5).
  auto push_a = PushFile(SourceTs(60), a.publish, "live");
  auto push_b = PushFile(SourceTs(60), b.publish, "live");
  REQUIRE(Eventually(
      [&] {
        return !SegmentsOf(Http("GET", a.http, "/live/v1/index.ll.m3u8").body).empty() &&
               !SegmentsOf(Http("GET", b.http, "/live/v1/index.ll.m3u8").body).empty();
      },
      20s));
  auto upstream_of = [](const Streamer& e) {
    auto relays = Http("GET", e.http, "/status").Json()["relays"];
    return relays.is_array() && !relays.empty() && relays[0]["upstream"].is_string()
               ? relays[0]["upstream"].get<std::string>()
               : std::string();
  };
  Streamer* edge = &edge_1;
  Streamer* parent = nullptr;
  if (parent_edge) {
    // Both edges relay; the one whose upstream is the other plays (its sibling is the parent).
    REQUIRE(Eventually(
        [&] {
          Http("GET", edge_1.http, "/live/v1/index.ll.m3u8");
          Http("GET", edge_2.http, "/live/v1/index.ll.m3u8");
          return upstream_of(edge_1) == "edge-2" || upstream_of(edge_2) == "edge-1";
        },
        30s));
    edge = upstream_of(edge_1) == "edge-2" ? &edge_1 : &edge_2;
    parent = edge == &edge_1 ? &edge_2 : &edge_1;
  }
  auto playing = std::async(std::launch::async, [&] {
    // 18 s: about ten after the failure, which comes once three segments were relayed.
    return PlayInBrowser("http://" + edge->http + "/live/index.ll.m3u8", 18,
                         "--low-latency --timeout-s 80");
  });
  std::string upstream;
  REQUIRE(Eventually(
      [&] {
        upstream = upstream_of(*edge);
        return !upstream.empty();
      },
      30s));
  // Steady playback first: three more segments at the edge after the relay started.
  int64_t started = -1;
  REQUIRE(Eventually(
      [&] {  // the edge's playlist may not list a segment yet on a loaded machine
        auto s = SegmentsOf(Http("GET", edge->http, "/live/v1/index.ll.m3u8").body);
        if (!s.empty()) started = *s.rbegin();
        return started >= 0;
      },
      20s));
  REQUIRE(Eventually(
      [&] {
        auto s = SegmentsOf(Http("GET", edge->http, "/live/v1/index.ll.m3u8").body);
        return !s.empty() && *s.rbegin() >= started + 3;
      },
      20s));
  const auto failed_at = std::chrono::system_clock::now();
  if (parent) {
    REQUIRE(upstream == (parent == &edge_1 ? "edge-1" : "edge-2"));
    fail(*parent);
  } else {
    fail(upstream == "ingest-a" ? a : b);
  }
  auto result = playing.get();
  result["stall_after_failure_s"] = MaxStallSince(result, failed_at);
  INFO(result.dump());
  CHECK(result["ok"] == true);
  for (const auto& e : result["errors"]) CHECK(e["fatal"] == false);
  auto relays = Http("GET", edge->http, "/status").Json()["relays"];
  REQUIRE(relays.size() == 1);
  CHECK(relays[0]["upstream"] != upstream);
  // The start-up jump to the live edge is the only seek: none over a hole in the buffer (a part
  // missed at the move, or parts listed as gaps while their segment was in progress).
  CHECK(result["seeks"].get<int>() <= 1);
  result["failed_upstream"] = upstream;
  return result;
}

TEST_CASE(
    "S-21 S-26 parent edge killed under hls.js on its sibling, which moves to an ingest node, "
    "no fatal error",
    "[alone]") {
  auto result = UpstreamFailsUnderPlayer(
      [](Streamer& parent) {
        parent.process->Signal(SIGKILL);
        parent.process->Wait();
      },
      /*parent_edge=*/true);
  // Catch's console reporter wraps a long unbroken line very slowly: the figures only.
  INFO("ok " << result["ok"] << ", errors " << result["errors"].size() << ", seeks "
             << result["seeks"]);
  WARN("S-26 max stall behind the sibling edge after kill -9 of the parent edge: "
       << result["stall_after_failure_s"]
       << " s (the whole run's, start-up included: " << result["max_stall_s"] << " s)");
  REQUIRE(result["stall_after_failure_s"].get<double>() >= 0);
  CHECK(result["stall_after_failure_s"].get<double>() <= 0.5);  // one part target
}

// Three slots (its file's default): 0.28 s was measured with the R-8 soak beside it, but a CI
// run with another two-slot player test beside it stalled 0.63 s.
// Alone: its stall bound held alone and beside most light tests, not beside every one (0.75 s).
TEST_CASE("R-9 S-21 the edge's upstream black-holed under hls.js: the edge moves on", "[alone]") {
  std::string why;
  INFO(why);
  REQUIRE(EnterOwnNetwork(&why));  // before any process: they all live in the namespace
  auto result = UpstreamFailsUnderPlayer([](Streamer& upstream) {
    // Its viewer port drops packets: the edge's requests get no answer and no reset; central
    // still lists the node (the control channel is another port).
    BlackHole(PortOf(upstream.http));
  });
  INFO(result.dump());
  WARN("R-9 max stall behind the edge after its upstream was black-holed: "
       << result["stall_after_failure_s"]
       << " s (the whole run's, start-up included: " << result["max_stall_s"] << " s)");
  REQUIRE(result["stall_after_failure_s"].get<double>() >= 0);
  CHECK(result["stall_after_failure_s"].get<double>() <= 0.5);  // S-21 with R-9: one part target
}

// No time bound: two slots.
TEST_CASE("S-19 hls.js plays LL-HLS and HLS-TS through an edge that relays the stream",
          "[2slots]") {
  auto k = StartEdgeSetup("relay-play");
  auto& edge = k.edge;
  auto ll = PlayInBrowser("http://" + edge.http + "/live/index.ll.m3u8", 15, "--low-latency");
  INFO(ll.dump());
  CHECK(ll["ok"] == true);
  double latency = ll["hls_latency_s"].is_number() ? ll["hls_latency_s"].get<double>() : 99;
  std::printf("S-19 hls.js low-latency behind an edge: %.2f s behind the live edge\n", latency);
  auto ts = PlayInBrowser("http://" + edge.http + "/live/index.m3u8", 10);
  INFO(ts.dump());
  CHECK(ts["ok"] == true);
}

}  // namespace
}  // namespace meshwork::testing
