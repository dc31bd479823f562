// Constructors of the concrete sources behind StartSource(). Internal to streamer/ingest.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "streamer/ingest/source.h"
#include "streamer/ingest/url.h"

namespace meshwork::ingest {

absl::StatusOr<std::unique_ptr<Source>> StartUdpSource(std::string url, const SourceUrl& parsed,
                                                       BytesCallback on_bytes);
absl::StatusOr<std::unique_ptr<Source>> StartSrtSource(std::string url, const SourceUrl& parsed,
                                                       BytesCallback on_bytes);
absl::StatusOr<std::unique_ptr<Source>> StartHttpSource(std::string url, const SourceUrl& parsed,
                                                        BytesCallback on_bytes);

}  // namespace meshwork::ingest
