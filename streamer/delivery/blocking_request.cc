#include "streamer/delivery/blocking_request.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "common/status/status_map.h"

namespace meshwork::streamer {

int PartsPerSegment(int target_duration_ms, int part_target_ms) {
  return std::max(1, (target_duration_ms + part_target_ms - 1) / std::max(1, part_target_ms));
}

std::optional<int64_t> TuneInHoldMs(int64_t age_ms, int part_target_ms, int hold_pct) {
  if (hold_pct <= 0 || part_target_ms <= 0) return std::nullopt;
  const int64_t target = part_target_ms;
  const int64_t due_in = target - std::clamp<int64_t>(age_ms, 0, target);
  if (due_in * 100 > target * std::min(hold_pct, 100)) return std::nullopt;
  return due_in + target / 2;
}

absl::StatusOr<BlockingRequest> ParseBlockingRequest(std::string_view query) {
  BlockingRequest request;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    auto number = [&](int64_t* out) {
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), *out);
      return !value.empty() && value.size() <= 18 && ec == std::errc() &&
             p == value.data() + value.size() && *out >= 0;
    };
    if (key == "_HLS_msn") {
      int64_t v;
      if (!number(&v)) return InvalidField("_HLS_msn", "must be a non-negative integer");
      request.msn = v;
    } else if (key == "_HLS_part") {
      int64_t v;
      if (!number(&v) || v > 1'000'000) {
        return InvalidField("_HLS_part", "must be a non-negative integer");
      }
      request.part = static_cast<int>(v);
    } else if (key == "_HLS_skip") {
      if (value == "YES" || value == "v2") {
        request.skip = true;
      } else {
        return InvalidField("_HLS_skip", "must be YES or v2");
      }
    }
  }
  if (request.part && !request.msn) {
    return InvalidField("_HLS_part", "_HLS_part requires _HLS_msn");
  }
  return request;
}

absl::StatusOr<Position> BlockingTarget(const BlockingRequest& request, const Position& last,
                                        int target_duration_ms, int part_target_ms) {
  Position target{*request.msn, request.part.value_or(-1)};
  int per_segment = PartsPerSegment(target_duration_ms, part_target_ms);
  // Rollover: a part index past the last part of a segment is part 0 of the next.
  if (target.part >= per_segment) target = Position{target.msn + 1, 0};
  if (target.msn > last.msn + 2) {
    return InvalidField("_HLS_msn",
                        absl::StrCat("_HLS_msn=", request.msn.value(),
                                     " is more than two segments past the last (", last.msn, ")"));
  }
  if (target.part >= 0) {
    // The advance part limit: three target durations of parts past the last part.
    int64_t last_index = last.msn * per_segment + (last.part < 0 ? per_segment - 1 : last.part);
    int64_t wanted = target.msn * per_segment + target.part;
    int64_t limit = 3LL * target_duration_ms / std::max(1, part_target_ms);
    if (wanted - last_index > limit) {
      return InvalidField("_HLS_part", "the part is past the advance part limit");
    }
  }
  return target;
}

}  // namespace meshwork::streamer
