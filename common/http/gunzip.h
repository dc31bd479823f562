// Inflates a gzip body (RFC 1952) an upstream sent with `Content-Encoding: gzip`: the relay
// asks for its playlists compressed (P-16: a parent edge reloads each rendition's playlist for
// every part, a few percent of a low-bitrate stream's bytes when sent plain).
//
// Untrusted input: at most `limit` bytes come out (a small body that inflates past it is
// refused, not allocated); trailing bytes after the gzip member, a truncated stream or a bad
// checksum are errors. Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace meshwork::http {

absl::StatusOr<std::string> Gunzip(std::string_view data, size_t limit);

}  // namespace meshwork::http
