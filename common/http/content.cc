#include "common/http/content.h"

#include <zlib.h>

#include <charconv>

#include "absl/strings/str_cat.h"

namespace meshwork::http {
namespace {

bool ParseNumber(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

RangeResult ParseRange(std::string_view header, uint64_t size, ByteRange* range) {
  constexpr std::string_view kPrefix = "bytes=";
  if (header.substr(0, kPrefix.size()) != kPrefix) return RangeResult::kNone;
  std::string_view spec = header.substr(kPrefix.size());
  if (spec.find(',') != std::string_view::npos) return RangeResult::kNone;
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return RangeResult::kNone;
  std::string_view a = spec.substr(0, dash), b = spec.substr(dash + 1);
  uint64_t first = 0, last = 0;
  if (a.empty()) {  // suffix: the last n bytes
    uint64_t n = 0;
    if (!ParseNumber(b, &n)) return RangeResult::kNone;
    if (n == 0 || size == 0) return RangeResult::kUnsatisfiable;
    first = n >= size ? 0 : size - n;
    last = size - 1;
  } else {
    if (!ParseNumber(a, &first)) return RangeResult::kNone;
    if (b.empty()) {
      last = size ? size - 1 : 0;
    } else if (!ParseNumber(b, &last) || last < first) {
      return RangeResult::kNone;
    }
    if (first >= size) return RangeResult::kUnsatisfiable;
    last = std::min(last, size - 1);
  }
  range->first = first;
  range->last = last;
  return RangeResult::kSatisfiable;
}

MediaSlice PrepareMediaHeader(const Request& request, uint64_t size, std::string_view content_type,
                              Response& header) {
  header.version(11);
  header.result(Status::ok);
  header.set(beast_http::field::content_type, content_type);
  header.set(beast_http::field::accept_ranges, "bytes");
  header.erase(beast_http::field::content_range);
  auto asked = request.find(beast_http::field::range);
  ByteRange range;
  RangeResult r =
      asked == request.end() ? RangeResult::kNone : ParseRange(asked->value(), size, &range);
  switch (r) {
    case RangeResult::kUnsatisfiable:
      header.result(Status::range_not_satisfiable);
      header.set(beast_http::field::content_range, absl::StrCat("bytes */", size));
      return MediaSlice{};
    case RangeResult::kSatisfiable:
      header.result(Status::partial_content);
      header.set(beast_http::field::content_range,
                 absl::StrCat("bytes ", range.first, "-", range.last, "/", size));
      return MediaSlice{true, range.first, range.last - range.first + 1};
    case RangeResult::kNone:
      break;
  }
  return MediaSlice{true, 0, size};
}

Response MediaResponse(const Request& request, std::shared_ptr<const std::string> body,
                       std::string_view content_type) {
  Response res{Status::ok, 11};
  MediaSlice slice = PrepareMediaHeader(request, body->size(), content_type, res);
  if (slice.send_body) {
    if (slice.offset == 0 && slice.length == body->size()) {
      res.body() = *body;
    } else {
      res.body().assign(*body, slice.offset, slice.length);
    }
  }
  res.prepare_payload();
  return res;
}

void SendMedia(const Request& request, Responder& responder, SharedBuffers body,
               std::string_view content_type, Response header) {
  header.body().clear();
  header.erase(beast_http::field::content_length);
  header.erase(beast_http::field::transfer_encoding);
  MediaSlice slice = PrepareMediaHeader(request, body.size, content_type, header);
  if (!slice.send_body) {
    header.prepare_payload();
    responder.Send(std::move(header));
    return;
  }
  responder.SendBuffers(std::move(header), std::move(body), slice.offset, slice.length);
}

bool AcceptsGzip(const Request& request) {
  auto it = request.find(beast_http::field::accept_encoding);
  if (it == request.end()) return false;
  std::string_view v = it->value();
  size_t at = v.find("gzip");
  if (at == std::string_view::npos) return false;
  // "gzip;q=0" refuses it.
  std::string_view rest = v.substr(at + 4);
  size_t comma = rest.find(',');
  std::string_view params = rest.substr(0, comma);
  return params.find("q=0") == std::string_view::npos ||
         params.find("q=0.") != std::string_view::npos;
}

std::string Gzip(std::string_view data) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip wrapper instead of zlib's.
  deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, data.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

void AddCors(Response& response, std::string_view allow_origin) {
  response.set(beast_http::field::access_control_allow_origin, allow_origin);
  if (allow_origin != "*") response.set(beast_http::field::vary, "Origin");
  response.set(beast_http::field::access_control_expose_headers,
               "Content-Length, Content-Range, Date, Age");
}

Response PreflightResponse(const Request& request, std::string_view allow_origin) {
  Response res{Status::no_content, 11};
  AddCors(res, allow_origin);
  res.set(beast_http::field::access_control_allow_methods, "GET, HEAD, OPTIONS");
  auto asked = request.find(beast_http::field::access_control_request_headers);
  res.set(beast_http::field::access_control_allow_headers,
          asked != request.end() ? std::string(asked->value()) : std::string("Range"));
  res.set(beast_http::field::access_control_max_age, "86400");
  res.prepare_payload();
  return res;
}

}  // namespace meshwork::http
