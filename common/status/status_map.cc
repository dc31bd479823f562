#include "common/status/status_map.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace meshwork {
namespace {
constexpr char kFieldPayload[] = "meshwork.field";
}  // namespace

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kFailedPrecondition:
      return 412;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

std::string CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "ok";
    case absl::StatusCode::kCancelled:
      return "cancelled";
    case absl::StatusCode::kUnknown:
      return "unknown";
    case absl::StatusCode::kInvalidArgument:
      return "invalid_argument";
    case absl::StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kAlreadyExists:
      return "already_exists";
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case absl::StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case absl::StatusCode::kAborted:
      return "aborted";
    case absl::StatusCode::kOutOfRange:
      return "out_of_range";
    case absl::StatusCode::kUnimplemented:
      return "unimplemented";
    case absl::StatusCode::kInternal:
      return "internal";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    case absl::StatusCode::kDataLoss:
      return "data_loss";
    case absl::StatusCode::kUnauthenticated:
      return "unauthenticated";
    default:
      return "unknown";
  }
}

absl::Status WithField(absl::Status status, std::string_view field) {
  status.SetPayload(kFieldPayload, absl::Cord(absl::string_view(field.data(), field.size())));
  return status;
}

std::string FieldOf(const absl::Status& status) {
  auto payload = status.GetPayload(kFieldPayload);
  return payload ? std::string(*payload) : std::string();
}

absl::Status InvalidField(std::string_view field, std::string_view message) {
  return WithField(
      absl::InvalidArgumentError(absl::StrCat(absl::string_view(field.data(), field.size()), ": ",
                                              absl::string_view(message.data(), message.size()))),
      field);
}

nlohmann::json ErrorBody(const absl::Status& status) {
  nlohmann::json error = {{"status", HttpStatusFor(status.code())},
                          {"code", CodeName(status.code())},
                          {"message", std::string(status.message())}};
  std::string field = FieldOf(status);
  if (!field.empty()) error["field"] = field;
  return {{"error", error}};
}

}  // namespace meshwork
