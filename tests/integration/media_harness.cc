#include "tests/integration/media_harness.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include "tests/test_paths.h"

namespace meshwork::testing {

std::pair<int, std::string> RunCommand(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int rc = pclose(p);
  return {rc, out};
}

const std::string& SourceTs(int seconds) {
  static std::mutex mu;
  static std::map<int, std::string> made;
  std::lock_guard<std::mutex> lock(mu);
  auto it = made.find(seconds);
  if (it != made.end()) return it->second;
  const std::string args =
      "-f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi "
      "-i sine=frequency=440:sample_rate=48000 -t " +
      std::to_string(seconds) +
      " -c:v libx264 -preset veryfast -g 50 -keyint_min 50 -sc_threshold 0 -pix_fmt yuv420p "
      "-c:a aac -b:a 96k -f mpegts";
  // The encode is deterministic (the same bytes every time), so one file serves every test
  // process of every run: each ctest entry is its own process, and an encode on both cores at
  // a test's start was a burst of load beside the stall-bounded tests (M-10, R-9). Kept under
  // the system's temporary directory, named by a hash of the arguments; written under a
  // temporary name and renamed, so a reader never sees a partial file.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "meshwork-test-sources";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / ("source-" + std::to_string(seconds) + "s-" +
                               std::to_string(std::hash<std::string>()(args) % 1000000007) + ".ts");
  if (!fs::exists(file, ec) || fs::file_size(file, ec) == 0) {
    const std::string partial =
        file.string() + ".partial." + std::to_string(static_cast<long>(getpid()));
    auto [rc, out] =
        RunCommand("ffmpeg -hide_banner -loglevel error -y " + args + " " + partial + " 2>&1");
    INFO(out);
    REQUIRE(rc == 0);
    fs::rename(partial, file, ec);
    REQUIRE_FALSE(ec);
  }
  return made.emplace(seconds, file.string()).first->second;
}

std::unique_ptr<Process> SendTs(const std::string& url) {
  return Process::Start(
      {"/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-i", SourceTs(60), "-c",
       "copy", "-copyts", "-muxdelay", "0", "-muxpreload", "0", "-f", "mpegts", url},
      MakeTempDir("sender") + ".log");
}

std::unique_ptr<Process> PushFile(const std::string& file, const std::string& publish_address,
                                  const std::string& stream,
                                  const std::vector<std::string>& input_args,
                                  const std::vector<std::string>& output_args) {
  std::vector<std::string> argv = {"/usr/bin/ffmpeg", "-hide_banner", "-loglevel", "error", "-re"};
  argv.insert(argv.end(), input_args.begin(), input_args.end());
  // The file's own timestamps, unshifted: every push of it is "the same source" (S-5).
  argv.insert(argv.end(),
              {"-i", file, "-c", "copy", "-copyts", "-muxdelay", "0", "-muxpreload", "0"});
  argv.insert(argv.end(), output_args.begin(), output_args.end());
  argv.insert(argv.end(), {"-f", "mpegts", "-method", "PUT",
                           "http://" + publish_address + "/" + stream + "/publish"});
  return Process::Start(argv, MakeTempDir("ffmpeg") + ".log");
}

MediaPlaylistInfo ParseMediaPlaylist(const std::string& text) {
  MediaPlaylistInfo info;
  std::istringstream in(text);
  std::string line;
  PlaylistEntry next;
  while (std::getline(in, line)) {
    if (line.rfind("#EXT-X-TARGETDURATION:", 0) == 0) {
      info.target_duration = std::stoi(line.substr(22));
    } else if (line.rfind("#EXT-X-MEDIA-SEQUENCE:", 0) == 0) {
      info.media_sequence = std::stoll(line.substr(22));
    } else if (line.rfind("#EXT-X-PROGRAM-DATE-TIME:", 0) == 0) {
      next.program_date_time = line.substr(25);
    } else if (line == "#EXT-X-DISCONTINUITY") {
      next.discontinuity = true;
    } else if (line.rfind("#EXTINF:", 0) == 0) {
      next.duration = std::stod(line.substr(8));
    } else if (!line.empty() && line[0] != '#') {
      next.msn = std::stoll(line.substr(0, line.find('.')));
      info.entries.push_back(next);
      next = PlaylistEntry();
    }
  }
  return info;
}

nlohmann::json Probe(const std::string& file) {
  auto [rc, out] = RunCommand(
      "ffprobe -v error -show_entries stream=codec_name,codec_type,start_time,width,height "
      "-show_entries format=duration,start_time -of json '" +
      file + "'");
  auto j = nlohmann::json::parse(out, nullptr, false);
  auto [rc2, frame] = RunCommand(
      "ffprobe -v error -select_streams v:0 -read_intervals '%+#1' -show_entries "
      "frame=key_frame,pts_time -of json '" +
      file + "'");
  auto f = nlohmann::json::parse(frame, nullptr, false);
  if (!j.is_discarded() && !f.is_discarded() && f.contains("frames") && !f["frames"].empty()) {
    j["first_video_frame"] = f["frames"][0];
  }
  return j;
}

Streamer StartIngestWithStream(const Central& central, const std::string& id,
                               const std::string& stream, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& extra) {
  Streamer node = StartStreamer(central.grpc, id, "ingest", extra);
  nlohmann::json body = {{"placement", {{"streamers", nlohmann::json::array({id})}}},
                         {"inputs", inputs}};
  auto existing = Http("GET", central.http, "/central/api-v4/streams/" + stream);
  if (existing.status == 200) {
    body = existing.Json();
    body["placement"]["streamers"].push_back(id);
  }
  auto put = Http("PUT", central.http, "/central/api-v4/streams/" + stream, body.dump());
  INFO(put.body);
  REQUIRE((put.status == 200 || put.status == 201));
  // Placed and applied: the node reports the stream in its load reports.
  REQUIRE(Eventually(
      [&] {
        auto r = Http("GET", central.http, "/central/api-v4/streamers/" + id).Json();
        if (!r.is_object() || r["status"]["online"] != true) return false;
        for (const auto& s : r["status"]["report"]["streams"]) {
          if (s["name"] == stream) return true;
        }
        return false;
      },
      10s));
  return node;
}

double MaxStallSince(const nlohmann::json& result, std::chrono::system_clock::time_point since) {
  if (!result.contains("stalls") || !result["stalls"].is_array()) return -1;
  const double since_ms = static_cast<double>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since.time_since_epoch()).count());
  double longest = 0;
  for (const auto& stall : result["stalls"]) {
    if (stall["end_ms"].get<double>() >= since_ms)
      longest = std::max(longest, stall["s"].get<double>());
  }
  return longest;
}

nlohmann::json PlayInBrowser(const std::string& url, int seconds, const std::string& flags) {
  // play.mjs's diagnostics (browser console errors, failed requests, player events) go to a
  // file; a failed run carries their tail, so the test failure shows what the player said.
  std::string log = MakeTempDir("play") + "/play.log";
  auto [rc, out] =
      RunCommand("node " + SourcePath("tests/e2e/play.mjs") + " --url '" + url + "' --seconds " +
                 std::to_string(seconds) + " " + flags + " 2>'" + log + "'");
  auto at = out.rfind("RESULT ");
  nlohmann::json result;
  if (at != std::string::npos) result = nlohmann::json::parse(out.substr(at + 7), nullptr, false);
  if (!result.is_object()) result = {{"ok", false}, {"reason", "play.mjs printed no RESULT line"}};
  result["exit_code"] = rc;
  if (result["ok"] != true) {
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    size_t from = lines.size() > 40 ? lines.size() - 40 : 0;
    std::string tail;
    for (size_t i = from; i < lines.size(); ++i) tail += lines[i] + "\n";
    result["log_tail"] = tail;
  }
  return result;
}

void WriteFile(const std::string& path, const std::string& body) {
  std::ofstream out(path, std::ios::binary);
  out << body;
}

void CheckPlayed(const nlohmann::json& result, int seconds) {
  INFO("reason: " << result.value("reason", nlohmann::json()).dump());
  INFO("errors: " << result.value("errors", nlohmann::json::array()).dump());
  INFO("play.mjs log tail:\n" << result.value("log_tail", std::string()));
  INFO("result: " << result.dump());
  CHECK(result["exit_code"] == 0);
  CHECK(result["ok"] == true);
  CHECK(result.value("played_s", 0.0) >= seconds);
  for (const auto& e : result.value("errors", nlohmann::json::array())) {
    CHECK(e["fatal"] == false);
  }
}

MediaPlaylistInfo Playlist(const Streamer& node, const std::string& stream) {
  auto r = Http("GET", node.http, "/" + stream + "/v1/index.m3u8");
  return r.status == 200 ? ParseMediaPlaylist(r.body) : MediaPlaylistInfo{};
}

bool HasSegments(const Streamer& node, const std::string& stream, size_t n) {
  return Playlist(node, stream).entries.size() >= n;
}

nlohmann::json ReportedStream(const Central& central, const std::string& id,
                              const std::string& stream) {
  auto node = Http("GET", central.http, "/central/api-v4/streamers/" + id).Json();
  if (!node.is_object() || !node["status"].is_object()) return nullptr;
  for (const auto& s : node["status"]["report"]["streams"]) {
    if (s["name"] == stream) return s;
  }
  return nullptr;
}

std::string ActiveInput(const Central& central, const std::string& id, const std::string& stream) {
  auto s = ReportedStream(central, id, stream);
  return s.is_object() ? s.value("active_input", std::string()) : std::string();
}

int CheckSameTimeline(const Streamer& a, const Streamer& b, const std::string& stream,
                      const std::string& dir, int64_t from_msn) {
  auto pa = Playlist(a, stream), pb = Playlist(b, stream);
  std::map<int64_t, PlaylistEntry> by_msn;
  for (const auto& e : pa.entries) by_msn[e.msn] = e;
  int common = 0;
  for (const auto& e : pb.entries) {
    auto it = by_msn.find(e.msn);
    if (e.msn < from_msn || it == by_msn.end()) continue;
    ++common;
    INFO("msn " << e.msn);
    CHECK(e.duration == Approx(it->second.duration).margin(0.0005));
    CHECK(e.program_date_time == it->second.program_date_time);
    // Same PTS: the segments begin with the same video timestamp.
    const std::string path = "/" + stream + "/v1/" + std::to_string(e.msn) + ".ts";
    const std::string fa = dir + "/timeline-a.ts", fb = dir + "/timeline-b.ts";
    WriteFile(fa, Http("GET", a.http, path).body);
    WriteFile(fb, Http("GET", b.http, path).body);
    CHECK(Probe(fa)["first_video_frame"]["pts_time"] == Probe(fb)["first_video_frame"]["pts_time"]);
  }
  return common;
}

nlohmann::json PlayDash(const std::string& mpd_url, int seconds, const std::string& flags) {
  auto result = PlayInBrowser(mpd_url, seconds, "--player dash --timeout-s 45 " + flags);
  INFO("result: " << result.dump());
  CHECK(result.value("player_version", std::string()).rfind("5.", 0) == 0);  // "5.x.y"
  return result;
}

std::string MpdAttr(const std::string& xml, const std::string& tag, const std::string& name,
                    size_t nth) {
  size_t pos = 0;
  for (size_t i = 0;; ++i, ++pos) {
    pos = xml.find("<" + tag + " ", pos);
    if (pos == std::string::npos) return "";
    if (i == nth) break;
  }
  std::string element = xml.substr(pos, xml.find('>', pos) - pos);
  size_t a = element.find(" " + name + "=\"");
  if (a == std::string::npos) return "";
  a += name.size() + 3;
  return element.substr(a, element.find('"', a) - a);
}

void CheckSameDashTimeline(const std::string& mpd, const std::string& reference) {
  INFO("MPD: " << mpd << "\nreference: " << reference);
  for (const auto& [tag, name] : std::vector<std::pair<std::string, std::string>>{
           {"MPD", "availabilityStartTime"},
           {"Period", "id"},
           {"Period", "start"},
           {"SegmentTemplate", "startNumber"},
           {"SegmentTemplate", "presentationTimeOffset"}}) {
    INFO(tag << "@" << name);
    CHECK(!MpdAttr(mpd, tag, name).empty());
    CHECK(MpdAttr(mpd, tag, name) == MpdAttr(reference, tag, name));
  }
}

std::string Hint(const std::string& playlist) {
  std::smatch m;
  if (std::regex_search(playlist, m, std::regex("PRELOAD-HINT:TYPE=PART,URI=\"([^\"]+)\""))) {
    return m[1];
  }
  return "";
}

TsProbe ProbeTs(const std::string& path, const std::string& bytes) {
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  TsProbe p;
  p.probe = Probe(path);
  if (p.probe.is_discarded() || !p.probe.contains("streams")) return p;
  for (const auto& s : p.probe["streams"]) {
    p.codecs += (p.codecs.empty() ? "" : ",") + s.value("codec_name", "");
  }
  p.errors = RunCommand("ffmpeg -hide_banner -v error -i " + path + " -f null - 2>&1").second;
  return p;
}

std::string EntryOf(const std::string& playlist, const std::string& msn) {
  std::istringstream in(playlist);
  std::string line, pending, out;
  while (std::getline(in, line)) {
    if (line.starts_with("#EXTINF") || line.starts_with("#EXT-X-PROGRAM-DATE-TIME")) {
      pending += line + "\n";
    } else if (!line.empty() && line[0] != '#') {
      if (line.starts_with(msn + ".ts")) return pending + line;
      pending.clear();
    }
  }
  return "";
}

std::set<int64_t> SegmentsOf(const std::string& playlist) {
  std::set<int64_t> out;
  static const std::regex kSegment("\n(\\d+)\\.m4s(\\?[^\n]*)?\n");  // ?v=N (L-14)
  for (auto it = std::sregex_iterator(playlist.begin(), playlist.end(), kSegment);
       it != std::sregex_iterator(); ++it) {
    out.insert(std::stoll((*it)[1]));
  }
  return out;
}

}  // namespace meshwork::testing
