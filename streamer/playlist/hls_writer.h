// The one HLS playlist writer (RFC 8216, rfc8216bis for LL-HLS). Every playlist the node
// serves — live HLS-TS and CMAF media playlists, LL-HLS full and delta playlists, archive
// playlists, and every master playlist (OTT backups included) — is described as a Master or
// a Media value by its renderer (playlists.cc, ll_hls.cc, archive_routes.cc, ott/backups.cc)
// and printed here. No other code writes HLS tags.
//
// URIs: every URI the writer prints (variants, audio groups, maps, segments, parts, preload
// hints, rendition reports) goes through one function, WithQuery, with the playlist's
// `uri_query`: a query that must follow the viewer into every request the playlist leads to
// (a viewer token, a steering pathway) is added there once, for every form.
//
// Pure functions of their input; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meshwork::streamer::hls {

// The audio group every master playlist names (S-16a): GROUP-ID and NAME "audio".
inline constexpr char kAudioGroup[] = "audio";

// `uri` with `query` ("k=v&k2=v2", or empty) appended: after '?' or '&' as `uri` needs.
std::string WithQuery(std::string_view uri, std::string_view query);

// "2026-11-29T12:00:00.123Z"
std::string FormatProgramDateTime(int64_t unix_ms);

struct Variant {
  uint64_t bandwidth = 0;  // printed as at least 1
  std::string codecs;      // RFC 6381, comma-separated; "" leaves CODECS out
  int width = 0;           // RESOLUTION when both are known
  int height = 0;
  double frame_rate = 0;     // FRAME-RATE when known
  bool audio_group = false;  // AUDIO="audio"
  std::string uri;
};

// The EXT-X-MEDIA audio rendition of the master's audio group.
struct AudioRendition {
  int channels = 0;  // CHANNELS when known
  std::string uri;
};

// CS-1: content steering. A pathway is one node's copy of the stream: its variants and audio
// group, their URIs `base` + the variant's URI (base "" keeps them relative: this node).
struct Pathway {
  std::string id;    // the node id
  std::string base;  // "http://host:port/<stream>/", or "" for this node
};
struct Steering {
  std::string server_uri;  // EXT-X-CONTENT-STEERING:SERVER-URI
  std::string pathway_id;  // the pathway the player starts on (this node)
  std::vector<Pathway> pathways;
  // This node's absolute base, for forms that cannot mix relative and absolute URIs (an MPD's
  // BaseURLs); "" when unknown.
  std::string self_base;
};

struct Master {
  int version = 3;
  std::optional<AudioRendition> audio;
  std::vector<Variant> variants;
  std::string uri_query;  // appended to every URI (WithQuery)
  // With steering, the variants and the audio group are printed once per pathway, each
  // variant with PATHWAY-ID and each pathway's audio group named "audio-<pathway>" (a group's
  // renditions belong to one pathway); nullopt or no pathway: printed once, no steering.
  std::optional<Steering> steering;
};

// Empty when there is no variant.
std::string Write(const Master& master);

// The EXT-X-STREAM-INF line of a variant, without newline (OTT backups repeat it, O-6).
std::string StreamInf(const Variant& variant, std::string_view audio_group = kAudioGroup);

struct PartLine {
  int64_t duration90k = 0;
  std::string uri;
  bool independent = false;
  bool gap = false;  // GAP=YES (L-13: a masked segment's parts)
};

struct SegmentLine {
  bool discontinuity = false;                   // EXT-X-DISCONTINUITY before it
  std::optional<std::string> map_uri;           // an EXT-X-MAP taking effect at it
  std::optional<int64_t> program_date_time_ms;  // EXT-X-PROGRAM-DATE-TIME
  bool gap = false;                             // EXT-X-GAP (L-13)
  std::vector<PartLine> parts;                  // EXT-X-PART lines before its EXTINF
  int64_t duration90k = 0;
  std::string uri;
};

// The segment being built (LL-HLS): its date and the parts it has so far, no EXTINF.
struct OpenSegment {
  std::optional<int64_t> program_date_time_ms;
  std::vector<PartLine> parts;
};

// LL-HLS (rfc8216bis §4.4.3.8, §4.4.3.7).
struct ServerControl {
  double part_hold_back_s = 0;
  double can_skip_until_s = 0;
};

struct RenditionReport {
  std::string uri;
  int64_t last_msn = 0;
  int last_part = 0;
};

struct Media {
  int version = 3;
  int target_duration_s = 1;
  std::optional<ServerControl> server_control;  // CAN-BLOCK-RELOAD=YES with these
  std::optional<double> part_target_s;          // EXT-X-PART-INF
  int64_t media_sequence = 0;
  int64_t discontinuity_sequence = 0;        // printed when > 0
  std::optional<std::string> playlist_type;  // "VOD" or "EVENT"
  std::optional<std::string> map_uri;        // EXT-X-MAP for every segment
  int64_t skipped_segments = 0;              // EXT-X-SKIP (a delta update) when > 0
  std::vector<SegmentLine> segments;
  std::optional<OpenSegment> open;
  std::optional<std::string> preload_hint_uri;  // EXT-X-PRELOAD-HINT:TYPE=PART
  std::vector<RenditionReport> rendition_reports;
  bool endlist = false;
  int extinf_decimals = 3;  // LL-HLS prints 5, so that parts add up to their segment
  std::string uri_query;    // appended to every URI (WithQuery)
};

std::string Write(const Media& media);

}  // namespace meshwork::streamer::hls
