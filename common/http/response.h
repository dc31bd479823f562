// Builders for common responses.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "common/http/types.h"
#include "nlohmann/json.hpp"

namespace meshwork::http {

Response MakeResponse(Status status, std::string body, std::string_view content_type,
                      unsigned version = 11);
Response JsonResponse(Status status, const nlohmann::json& body);
// The M-1 error body for `status` with its mapped HTTP status.
Response ErrorResponse(const absl::Status& status);
// An error with an explicit HTTP status and code name (for transport-level errors).
Response ErrorResponse(Status http_status, std::string_view code, std::string_view message);

}  // namespace meshwork::http
