#include "common/http/response.h"

#include "common/status/status_map.h"

namespace meshwork::http {

Response MakeResponse(Status status, std::string body, std::string_view content_type,
                      unsigned version) {
  Response res{status, version};
  res.set(beast_http::field::content_type, content_type);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response JsonResponse(Status status, const nlohmann::json& body) {
  return MakeResponse(status, body.dump() + "\n", "application/json");
}

Response ErrorResponse(const absl::Status& status) {
  return JsonResponse(static_cast<Status>(HttpStatusFor(status.code())), ErrorBody(status));
}

Response ErrorResponse(Status http_status, std::string_view code, std::string_view message) {
  nlohmann::json body = {{"error",
                          {{"status", static_cast<int>(http_status)},
                           {"code", std::string(code)},
                           {"message", std::string(message)}}}};
  return JsonResponse(http_status, body);
}

}  // namespace meshwork::http
