// The HTTP limits an operator sets with flags, shared by both binaries so every listener
// reads the same names (see docs/security.md for what each bounds):
//   --http-header-limit-bytes, --http-body-limit-bytes, --http-chunk-extension-limit-bytes,
//   --http-max-buffered-body-bytes, --http-max-connections,
//   --http-idle-timeout-ms, --http-read-timeout-ms, --http-send-timeout-ms
// A listener with a cap of its own (the streamer's publish listener and its
// --max-buffered-upload-bytes) overrides the field after ApplyServerFlags.
#pragma once

#include "common/http/server.h"

namespace meshwork::http {

// Copies the flags' values into `options`. Call after absl::ParseCommandLine.
void ApplyServerFlags(ServerOptions& options);

}  // namespace meshwork::http
