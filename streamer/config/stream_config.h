// One stream's configuration as a streamer runs it: the one stream model.
//
// Central validates a stream object and resolves every member (central/model/object_codecs.cc)
// before it pushes it; the agent turns it into a StreamConfig once per config revision
// (ParseStreamConfig, called from ApplyUpdate), and every module — the packager, the store's
// read rules, the OTT gate, the recorder, publish authentication, the origin feed — reads the
// typed fields of that one immutable value, shared by pointer. No other streamer code parses a
// stream object. Defaults for absent members come from common/stream/defaults.h, the same ones
// central resolves with. A member of the wrong type (which central never sends) takes its
// default and is logged once per parse.
//
// Plain values; ParseStreamConfig is pure apart from that log line. Thread-safe to share.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/net/cidr.h"
#include "common/net/http_url.h"
#include "common/stream/defaults.h"
#include "common/time/timeline_anchor.h"
#include "nlohmann/json.hpp"

namespace meshwork::streamer {

// L-4, L-5: when each object of a rendition is due.
struct Template {
  // Not known yet (derived from the first publish). Any other value is a start, negative
  // ones included: a local stream's msn numbering (S-5) can put its derived start before 1970.
  static constexpr int64_t kUnknownStart = std::numeric_limits<int64_t>::min();
  int64_t availability_start_ms = kUnknownStart;
  int segment_ms = stream_defaults::kSegmentMs;
  int part_ms = stream_defaults::kPartMs;  // 0: no parts
  int retry_deadline_ms = stream_defaults::kSegmentMs;
  int grace_ms = stream_defaults::kGraceMs;  // L-12

  bool known() const { return availability_start_ms != kUnknownStart; }
  // The start arithmetic uses: an unknown start counts as the epoch, so due times and
  // wall times computed before the first publish are finite (never an overflow).
  int64_t base() const { return known() ? availability_start_ms : 0; }
  // due(msn) = availability_start + (msn+1)·segment_ms; a part p of msn is due when it
  // ends: availability_start + msn·segment_ms + (p+1)·part_ms.
  int64_t Due(int64_t msn, int part = -1) const;
  // The msn whose segment is being produced at `now_ms` (due in (now, now + segment_ms]).
  int64_t ProducingMsn(int64_t now_ms) const;
  // The availability start that makes `msn` due at `published_ms` (for streams whose
  // configuration leaves it open).
  int64_t StartFor(int64_t msn, int64_t published_ms) const;
  bool operator==(const Template&) const = default;
};

// A range of msns of a pipeline and/or a region (L-13 masks, L-14 ranged versions); an absent
// bound or selector matches everything.
struct MsnRange {
  std::optional<std::string> pipeline;
  std::optional<std::string> region;
  std::optional<int64_t> from_msn;
  std::optional<int64_t> to_msn;
  bool operator==(const MsnRange&) const = default;
};

// L-14: the cache version of the objects a range covers.
struct RangeVersion {
  MsnRange range;
  uint64_t version = 0;
  bool operator==(const RangeVersion&) const = default;
};

// O-1, O-3a, O-15: the stream's `ott` member.
struct OttConfig {
  bool enabled = false;  // false too when no group is named
  std::string group;
  bool offered = true;     // backup: "can_replace" (false: "not_offered")
  int stale_after_ms = 0;  // O-3a; default kOttStaleSegments × segment_ms
  bool operator==(const OttConfig&) const = default;
};

// D-1…D-8: the stream's `dvr` member (present only with an absolute root).
struct DvrConfig {
  std::filesystem::path root;
  int64_t depth_s = stream_defaults::kDvrDepthS;
  bool ts = true;  // protocols recorded
  bool fmp4 = true;
  uint64_t max_bytes = 0;  // 0: no disk budget
  bool fsync = false;
  bool edges = false;  // edges relaying the stream record it too
  bool operator==(const DvrConfig&) const = default;
};

// S-23: one entry of the stream's `publish`: the ingest node `from` (empty: any) sends what it
// packages to node `to` as pipeline `pipeline`.
struct PublishTargetConfig {
  std::string to;
  std::string pipeline;
  std::string from;
  bool operator==(const PublishTargetConfig&) const = default;
};

// the operator's HTTP service asked once per new play session.
struct AccessBackend {
  net::HttpUrl url;
  std::chrono::milliseconds timeout{2000};
  bool allow_on_error = false;   // `on_error`: a timeout or a 5xx admits (else refuses)
  std::chrono::seconds ttl{60};  // an answer's lifetime when it names none
  bool operator==(const AccessBackend&) const = default;
};

// who may watch. A policy the node cannot read is kRefuse: the stream is refused to
// every viewer rather than served open (fail closed).
struct AccessConfig {
  enum class Mode { kOpen, kToken, kBackend, kRefuse };
  Mode mode = Mode::kOpen;
  net::CidrSet allow;                   // when non-empty, only these client addresses
  net::CidrSet deny;                    // never these
  uint64_t max_sessions_per_login = 0;  // A-8; 0: no limit
  AccessBackend backend;                // kBackend only
  bool open() const { return mode == Mode::kOpen && allow.empty() && deny.empty(); }
  bool operator==(const AccessConfig& o) const {
    return mode == o.mode && allow.cidrs() == o.allow.cidrs() && deny.cidrs() == o.deny.cidrs() &&
           max_sessions_per_login == o.max_sessions_per_login && backend == o.backend;
  }
};

struct StreamConfig {
  std::string name;

  // The local packager (S-1…S-10). A change of any of these restarts the stream's pipeline
  // (SamePackaging); the others apply in place.
  std::vector<std::string> inputs;  // URLs; "publish://" (HTTP push) when the object lists none
  int segment_ms = stream_defaults::kSegmentMs;  // always equal to tmpl.segment_ms
  int part_ms = stream_defaults::kPartMs;        // always equal to tmpl.part_ms
  int live_window = stream_defaults::kLiveWindow;
  int input_timeout_ms = stream_defaults::kInputTimeoutMs;

  std::string cors = stream_defaults::kCors;  // Access-Control-Allow-Origin

  // The live origin (L-4…L-14).
  Template tmpl;
  std::vector<std::string> pipelines;  // preference order (L-11)
  std::vector<MsnRange> masks;         // L-13
  uint64_t version = 1;                // L-14, at least 1
  std::vector<RangeVersion> range_versions;

  // S-5: the stream's timeline anchor as central keeps it (nullopt: none yet, or one out of
  // IsPlausibleAnchor's bounds, which is logged).
  std::optional<TimelineAnchor> timeline_anchor;

  OttConfig ott;
  std::optional<DvrConfig> dvr;  // nullopt: not recorded

  // M-3: publish tokens of the whole stream and per pipeline.
  std::vector<std::string> publish_tokens;
  std::map<std::string, std::vector<std::string>> pipeline_tokens;
  std::vector<PublishTargetConfig> publish;  // S-23
  AccessConfig access;

  // Whether the local packager's settings (inputs and timing) are those of `other`.
  bool SamePackaging(const StreamConfig& other) const;
  // M-3: whether a publisher of `pipeline` ("" for a push or RTMP publisher) must present a
  // token: whenever the stream has any token (a stream token, or any pipeline's). Which
  // token is valid: PublishAuth (a pipeline's own admits that pipeline only).
  bool PublishNeedsToken(const std::string& pipeline) const;
  // The token this node presents when it publishes to `pipeline` elsewhere (S-23): the
  // pipeline's first, else the stream's first; "" when there is none.
  std::string PublishTokenFor(const std::string& pipeline) const;
  bool operator==(const StreamConfig&) const = default;
};

// The streams placed on a node, by name.
using StreamConfigs = std::map<std::string, std::shared_ptr<const StreamConfig>>;

// Builds a stream's config from the stream object central pushes. Never fails: members absent
// or of the wrong type take their defaults (the latter logged, event=stream_config_member_ignored).
std::shared_ptr<const StreamConfig> ParseStreamConfig(const std::string& name,
                                                      const nlohmann::json& object);

}  // namespace meshwork::streamer
