#include "streamer/delivery/responses.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"

namespace meshwork::streamer {

http::Response NotFound(std::string_view what, std::string_view cors) {
  http::Response res = http::ErrorResponse(absl::NotFoundError(std::string(what)));
  res.set(http::beast_http::field::cache_control, "max-age=1");
  http::AddCors(res, cors);
  return res;
}

http::Response Unavailable(std::string_view message, std::string_view cors) {
  http::Response res = http::ErrorResponse(absl::UnavailableError(std::string(message)));
  res.set(http::beast_http::field::retry_after, "1");
  res.set(http::beast_http::field::cache_control, "no-store");
  http::AddCors(res, cors);
  return res;
}

http::Response ShedResponse(std::string_view message, std::string_view cors) {
  http::Response res = http::ErrorResponse(absl::UnavailableError(std::string(message)));
  res.set(http::beast_http::field::retry_after, "5");
  res.set(http::beast_http::field::cache_control, "max-age=5");
  http::AddCors(res, cors);
  return res;
}

http::Response PlaylistResponse(const http::Request& request, std::string body, int max_age,
                                std::string_view cors, std::string_view content_type,
                                bool personal) {
  http::Response res{http::Status::ok, 11};
  res.set(http::beast_http::field::content_type, content_type);
  res.set(http::beast_http::field::cache_control,
          absl::StrCat(personal ? "private, " : "", "max-age=", max_age));
  res.set(http::beast_http::field::vary, "Accept-Encoding");
  if (http::AcceptsGzip(request)) {
    res.set(http::beast_http::field::content_encoding, "gzip");
    res.body() = http::Gzip(body);
  } else {
    res.body() = std::move(body);
  }
  http::AddCors(res, cors);
  res.prepare_payload();
  return res;
}

}  // namespace meshwork::streamer
