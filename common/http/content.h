// Helpers for serving media objects and playlists to browsers (S-22): byte ranges, gzip,
// CORS.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/http/types.h"

namespace meshwork::http {

struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

enum class RangeResult { kNone, kSatisfiable, kUnsatisfiable };
// Parses a single-range `Range: bytes=…` header against an object of `size` bytes
// (`a-b`, `a-`, `-n`). Multiple ranges and other units are treated as kNone (serve whole).
RangeResult ParseRange(std::string_view header, uint64_t size, ByteRange* range);

// The bytes a media answer carries, decided by PrepareMediaHeader.
struct MediaSlice {
  bool send_body = false;  // false for 416: the answer has no body
  uint64_t offset = 0;
  uint64_t length = 0;
};
// Turns `header` into the answer to `request` for an object of `size` bytes, honouring a
// Range header: sets the status (200, 206 with Content-Range, or 416 with `bytes */size`),
// Content-Type and Accept-Ranges; other fields of `header` are kept. Returns the slice of
// the object to send.
MediaSlice PrepareMediaHeader(const Request& request, uint64_t size, std::string_view content_type,
                              Response& header);

// Answers `request` with `body` (status 200), honouring a Range header (206 / 416).
Response MediaResponse(const Request& request, std::shared_ptr<const std::string> body,
                       std::string_view content_type);

// Answers `request` through `responder` with `body` kept as chunks, honouring a Range header
// as MediaResponse does, and writes the chosen bytes straight from the chunks
// (Responder::SendBuffers, L-17). `header` carries extra fields set by the caller (caching,
// CORS); its status and body are replaced.
void SendMedia(const Request& request, Responder& responder, SharedBuffers body,
               std::string_view content_type, Response header = Response{Status::ok, 11});

// True when the request's Accept-Encoding allows gzip.
bool AcceptsGzip(const Request& request);
// gzip-compresses `data` (RFC 1952).
std::string Gzip(std::string_view data);

// Adds Access-Control-Allow-Origin (and Vary: Origin when not "*") and exposes the headers
// players read.
void AddCors(Response& response, std::string_view allow_origin);
// The answer to a CORS preflight (OPTIONS).
Response PreflightResponse(const Request& request, std::string_view allow_origin);

}  // namespace meshwork::http
