// What a request on the publish listener names (L-1, L-10): the path of an object a packager
// PUTs, a manifest it PUTs along (accepted and ignored: this node builds its own playlists),
// the notifications endpoint, or the continuous MPEG-TS push (S-1); and the X-Pipeline,
// X-Region and X-Defects headers. No I/O; fuzzed.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "streamer/store/origin_rules.h"

namespace meshwork::streamer {

struct PublishTarget {
  enum Kind { kObject, kManifest, kNotifications, kPush } kind = kObject;
  std::string stream;
  std::string rendition;  // empty for kNotifications and kPush
  ObjectKey key;          // for kObject
};

// Parses `/{stream}/{rendition}/{file}` (file: init.mp4, N.ts, N.m4s, N.P.m4s, *.m3u8,
// *.mpd), `/{stream}/notifications` and `/{stream}/publish`. Stream names may contain '/'.
// Segments are limited to [A-Za-z0-9._~-], never "." or "..". InvalidArgument naming
// "path" otherwise.
absl::StatusOr<PublishTarget> ParsePublishPath(std::string_view path);

struct PublishHeaders {
  std::string pipeline;
  std::string region;
  uint32_t defects = 0;  // Defect bits
};
// X-Pipeline (required, [a-z0-9-]{1,32}), X-Region (optional, [A-Za-z0-9._-]{1,64}),
// X-Defects (optional comma list of short, missing-frames, missing, timestamp-gap).
// InvalidArgument naming the header otherwise.
absl::StatusOr<PublishHeaders> ParsePublishHeaders(std::optional<std::string_view> pipeline,
                                                   std::optional<std::string_view> region,
                                                   std::optional<std::string_view> defects);

// [a-z0-9-]{1,32}: the pipeline id rule, shared with central's validation.
bool IsPipelineId(std::string_view id);

}  // namespace meshwork::streamer
