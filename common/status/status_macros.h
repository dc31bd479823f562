// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status-returning code.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MESHWORK_CONCAT_INNER(a, b) a##b
#define MESHWORK_CONCAT(a, b) MESHWORK_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    ::absl::Status _status = (expr);   \
    if (!_status.ok()) return _status; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(*tmp)

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(MESHWORK_CONCAT(_status_or_, __LINE__), lhs, expr)
