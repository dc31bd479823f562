#include "streamer/ingest/source.h"

#include <utility>

#include "streamer/ingest/sources.h"
#include "streamer/ingest/url.h"

namespace meshwork::ingest {

absl::StatusOr<std::unique_ptr<Source>> StartSource(const std::string& url,
                                                    BytesCallback on_bytes) {
  absl::StatusOr<SourceUrl> parsed = ParseSourceUrl(url);
  if (!parsed.ok()) return parsed.status();
  switch (parsed->kind) {
    case SourceKind::kUdp:
      return StartUdpSource(url, *parsed, std::move(on_bytes));
    case SourceKind::kSrt:
      return StartSrtSource(url, *parsed, std::move(on_bytes));
    case SourceKind::kHttp:
      return StartHttpSource(url, *parsed, std::move(on_bytes));
  }
  return absl::InvalidArgumentError("input URL \"" + url + "\": unsupported");
}

}  // namespace meshwork::ingest
