// Helpers for media tests with real peers: ffmpeg sources, ffprobe checks, playlist parsing.
#pragma once

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/integration/harness.h"

namespace meshwork::testing {

// Runs a shell command; returns its exit status and stdout.
std::pair<int, std::string> RunCommand(const std::string& command);

// A 2 s-GOP H.264 + AAC MPEG-TS test source of `seconds` (testsrc2 + sine), encoded once and
// kept in the system's temporary directory for every later test process and run (the
// encode is deterministic); never modify the file.
const std::string& SourceTs(int seconds = 40);

// `ffmpeg -re -i FILE -c copy -copyts -f mpegts -method PUT http://ADDRESS/STREAM/publish`
// (the file's timestamps kept as they are), with
// `input_args` placed before `-i` (e.g. {"-ss", "7"}) and `output_args` before `-f`.
std::unique_ptr<Process> PushFile(const std::string& file, const std::string& publish_address,
                                  const std::string& stream,
                                  const std::vector<std::string>& input_args = {},
                                  const std::vector<std::string>& output_args = {});

// `ffmpeg -re -i SourceTs(60) -c copy -copyts -f mpegts URL`: the test source in real time to
// a network input (udp://…, srt://…).
std::unique_ptr<Process> SendTs(const std::string& url);

struct PlaylistEntry {
  int64_t msn = 0;
  double duration = 0;
  std::string program_date_time;
  bool discontinuity = false;
};
struct MediaPlaylistInfo {
  int target_duration = 0;
  int64_t media_sequence = -1;
  std::vector<PlaylistEntry> entries;
};
MediaPlaylistInfo ParseMediaPlaylist(const std::string& text);
// `node`'s playlist of `stream`'s first rendition (empty when it answers no 200).
MediaPlaylistInfo Playlist(const Streamer& node, const std::string& stream);
// Whether that playlist lists at least `n` segments.
bool HasSegments(const Streamer& node, const std::string& stream, size_t n);

// The entry for `stream` in the load report central holds of node `id` (null when none):
// "active_input", "timeline_anchor", "working", …
nlohmann::json ReportedStream(const Central& central, const std::string& id,
                              const std::string& stream);

// The input `id` reports active for `stream` ("" when none).
std::string ActiveInput(const Central& central, const std::string& id, const std::string& stream);

// S-5: for every msn both nodes list (from `from_msn` on), the same duration, program
// date-time and first video PTS (segments saved under `dir` for ffprobe). Returns how many
// msns were compared.
int CheckSameTimeline(const Streamer& a, const Streamer& b, const std::string& stream,
                      const std::string& dir, int64_t from_msn = 0);

// ffprobe's JSON for a file (streams and format, and the first video frame's key flag).
nlohmann::json Probe(const std::string& file);

// The value of attribute `name` in the `nth` element `<tag …>` of an MPD ("" when absent).
std::string MpdAttr(const std::string& xml, const std::string& tag, const std::string& name,
                    size_t nth = 0);
// S-16a, S-25: `mpd` is on `reference`'s timeline — the same availabilityStartTime, first
// Period (id and start), startNumber and presentationTimeOffset, each present (Catch checks).
void CheckSameDashTimeline(const std::string& mpd, const std::string& reference);

// Starts an ingest streamer (`extra` flags added), places `stream` on it (inputs given) and
// waits until online.
Streamer StartIngestWithStream(const Central& central, const std::string& id,
                               const std::string& stream,
                               const std::vector<std::string>& inputs = {"publish://"},
                               const std::vector<std::string>& extra = {});

// Plays `url` in headless Chromium with tests/e2e/play.mjs for `seconds` (`flags` are more
// of its options, e.g. "--player dash"); returns its RESULT JSON with "exit_code" added, and,
// when the run failed, "log_tail" (the end of play.mjs's diagnostics). Without a RESULT line:
// {"ok": false, "reason": ...}. "reason" carries the player's own error text.
nlohmann::json PlayInBrowser(const std::string& url, int seconds, const std::string& flags = "");

// Checks a PlayInBrowser result: play.mjs exited 0, reported ok, played at least `seconds`,
// and no player error was fatal (the reason, errors and log tail are in the failure).
void CheckPlayed(const nlohmann::json& result, int seconds);

// The longest stall in a PlayInBrowser result that ended at or after `since` (a wall-clock
// time: the moment a test failed a node); 0 when none did. A stall that began before `since`
// counts whole. -1 when the result has no "stalls" list.
double MaxStallSince(const nlohmann::json& result, std::chrono::system_clock::time_point since);

// PlayInBrowser with the current dash.js (`flags` are more options, e.g. "--seek-to 10"):
// checks the player that ran is dash.js 5.x and returns the result for CheckPlayed.
nlohmann::json PlayDash(const std::string& mpd_url, int seconds, const std::string& flags = "");

// Writes `body` to `path`.
void WriteFile(const std::string& path, const std::string& body);

// The URI of a media playlist's part preload hint ("M.P.m4s"); empty when none.
std::string Hint(const std::string& playlist);

// ffprobe's view of an MPEG-TS segment `bytes` written to `path` (Probe), with its codecs
// joined ("h264,aac") and what ffmpeg says decoding it.
struct TsProbe {
  nlohmann::json probe;
  std::string codecs;
  std::string errors;
  double Start() const { return std::stod(probe["format"].value("start_time", "-1")); }
  double Duration() const { return std::stod(probe["format"].value("duration", "-1")); }
  double VideoStart() const {
    for (const auto& s : probe["streams"]) {
      if (s.value("codec_name", "") == "h264") return std::stod(s.value("start_time", "-1"));
    }
    return -1;
  }
  bool KeyFirst() const { return probe["first_video_frame"].value("key_frame", 0) == 1; }
};
TsProbe ProbeTs(const std::string& path, const std::string& bytes);

// The lines of an HLS-TS `playlist` that describe segment `msn` (its EXTINF, PDT and URI).
std::string EntryOf(const std::string& playlist, const std::string& msn);

// The msns of the fMP4 segments (`M.m4s`, a `?v=N` query allowed) an LL-HLS playlist lists.
std::set<int64_t> SegmentsOf(const std::string& playlist);

}  // namespace meshwork::testing
