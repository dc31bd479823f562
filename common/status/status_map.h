// One mapping between absl status codes and HTTP statuses (gRPC: grpc_status.h), and the REST error
// body of M-1: {"error": {"status": 400, "code": "invalid_argument", "field": "...",
// "message": "..."}}.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace meshwork {

// The HTTP status an absl code answers with (OK → 200).
int HttpStatusFor(absl::StatusCode code);

// The snake_case name of a code ("invalid_argument", "not_found", ...).
std::string CodeName(absl::StatusCode code);

// Statuses may name the offending field with a payload; these attach and read it.
absl::Status WithField(absl::Status status, std::string_view field);
std::string FieldOf(const absl::Status& status);

// Convenience: an InvalidArgument naming `field`, message "field: message".
absl::Status InvalidField(std::string_view field, std::string_view message);

// The M-1 error body for a non-OK status.
nlohmann::json ErrorBody(const absl::Status& status);

}  // namespace meshwork
