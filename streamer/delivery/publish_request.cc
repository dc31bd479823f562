#include "streamer/delivery/publish_request.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "common/status/absl_view.h"
#include "common/status/status_map.h"

namespace meshwork::streamer {

namespace {

constexpr size_t kMaxPathBytes = 1024;

bool IsSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '~' || c == '-';
}

bool ParseNumber(std::string_view s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && *out >= 0 && *out <= max;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

absl::Status BadPath(std::string_view message) { return InvalidField("path", message); }

// The object a file name names; false when it is none.
bool ParseObjectFile(std::string_view file, ObjectKey* key) {
  if (file == "init.mp4") {
    *key = ObjectKey{ObjectKey::kInit, -1, -1};
    return true;
  }
  if (EndsWith(file, ".ts")) {
    key->kind = ObjectKey::kTs;
    return ParseNumber(file.substr(0, file.size() - 3), kMaxMsn, &key->msn);
  }
  if (!EndsWith(file, ".m4s")) return false;
  std::string_view name = file.substr(0, file.size() - 4);
  size_t dot = name.find('.');
  if (dot == std::string_view::npos) {
    key->kind = ObjectKey::kM4s;
    return ParseNumber(name, kMaxMsn, &key->msn);
  }
  int64_t part = 0;
  key->kind = ObjectKey::kPart;
  if (!ParseNumber(name.substr(0, dot), kMaxMsn, &key->msn) ||
      !ParseNumber(name.substr(dot + 1), 100'000, &part)) {
    return false;
  }
  key->part = static_cast<int>(part);
  return true;
}

}  // namespace

bool IsPipelineId(std::string_view id) {
  return !id.empty() && id.size() <= 32 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

absl::StatusOr<PublishTarget> ParsePublishPath(std::string_view path) {
  if (path.size() > kMaxPathBytes) return BadPath("longer than 1024 bytes");
  if (path.empty() || path.front() != '/') return BadPath("must start with '/'");
  path.remove_prefix(1);
  // Every segment: non-empty, safe characters, not a dot segment.
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return BadPath("has an empty segment");
    if (segment == "." || segment == "..") return BadPath("must not contain . or .. segments");
    if (!std::all_of(segment.begin(), segment.end(), IsSegmentChar)) {
      return BadPath("segments may only contain letters, digits and . _ ~ -");
    }
    start = end + 1;
  }
  size_t last = path.rfind('/');
  if (last == std::string_view::npos) {
    return BadPath(
        "must be /{stream}/{rendition}/{object}, /{stream}/notifications or "
        "/{stream}/publish");
  }
  std::string_view file = path.substr(last + 1);
  std::string_view before = path.substr(0, last);
  PublishTarget t;
  if (file == "notifications" || file == "publish") {
    t.kind = file == "publish" ? PublishTarget::kPush : PublishTarget::kNotifications;
    t.stream = before;
    return t;
  }
  size_t split = before.rfind('/');
  if (split == std::string_view::npos) {
    return BadPath("an object path must be /{stream}/{rendition}/{object}");
  }
  t.stream = before.substr(0, split);
  t.rendition = before.substr(split + 1);
  if (EndsWith(file, ".m3u8") || EndsWith(file, ".mpd")) {
    t.kind = PublishTarget::kManifest;
    return t;
  }
  if (!ParseObjectFile(file, &t.key)) {
    return BadPath(absl::StrCat("\"", AbslView(file),
                                "\" is not an object name (init.mp4, {msn}.ts, {msn}.m4s, "
                                "{msn}.{part}.m4s)"));
  }
  return t;
}

absl::StatusOr<PublishHeaders> ParsePublishHeaders(std::optional<std::string_view> pipeline,
                                                   std::optional<std::string_view> region,
                                                   std::optional<std::string_view> defects) {
  PublishHeaders h;
  if (!pipeline) return InvalidField("X-Pipeline", "required ([a-z0-9-]{1,32})");
  if (!IsPipelineId(*pipeline)) {
    return InvalidField("X-Pipeline", "must match [a-z0-9-]{1,32}");
  }
  // The node's own pipelines: its packager ("local") and its relay ("relay"). A publisher
  // naming one would replace what the node itself made, and have it fed onwards as its own.
  if (*pipeline == "local" || *pipeline == "relay") {
    return InvalidField("X-Pipeline", "\"local\" and \"relay\" are the node's own pipelines");
  }
  h.pipeline = *pipeline;
  if (region) {
    bool ok = !region->empty() && region->size() <= 64 &&
              std::all_of(region->begin(), region->end(),
                          [](char c) { return IsSegmentChar(c) && c != '~'; });
    if (!ok) return InvalidField("X-Region", "must match [A-Za-z0-9._-]{1,64}");
    h.region = *region;
  }
  if (defects) {
    std::string_view rest = *defects;
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
      while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
      if (item.empty()) continue;
      if (item == "short") {
        h.defects |= kDefectShort;
      } else if (item == "missing-frames") {
        h.defects |= kDefectMissingFrames;
      } else if (item == "missing") {
        h.defects |= kDefectMissing;
      } else if (item == "timestamp-gap") {
        h.defects |= kDefectTimestampGap;
      } else {
        return InvalidField("X-Defects",
                            absl::StrCat("unknown defect \"", AbslView(item.substr(0, 40)),
                                         "\" (short, missing-frames, missing, timestamp-gap)"));
      }
    }
  }
  return h;
}

}  // namespace meshwork::streamer
