#include "streamer/delivery/responses.h"

#include <memory>
#include <vector>

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

const std::shared_ptr<const http::PreparedAnswer>& PreparedErrorAnswer(PreparedError which,
                                                                       std::string_view cors) {
  struct Kept {
    PreparedError which;
    std::string cors;
    std::shared_ptr<const http::PreparedAnswer> answer;
  };
  // Per thread: no lock, and the answers' reference counts stay on this core.
  thread_local std::vector<Kept> kept;
  for (const Kept& k : kept) {
    if (k.which == which && k.cors == cors) return k.answer;
  }
  if (kept.size() >= 32) kept.clear();  // answers being written are held by their sessions
  http::Response res;
  switch (which) {
    case PreparedError::kNotYet:
      res = http::ErrorResponse(absl::NotFoundError("not published yet"));
      break;
    case PreparedError::kGone:
      res = http::ErrorResponse(http::Status::gone, "gone",
                                "not delivered by any pipeline before its retry deadline, or "
                                "before the stream's start");
      break;
    case PreparedError::kNoObject:
      res = NotFound("no such object", cors);
      break;
    case PreparedError::kNoRendition:
      res = NotFound("no such rendition", cors);
      break;
  }
  http::AddCors(res, cors);
  kept.push_back(
      Kept{which, std::string(cors), std::make_shared<const http::PreparedAnswer>(std::move(res))});
  return kept.back().answer;
}

}  // namespace meshwork::streamer
