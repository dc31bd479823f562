// Text names of node roles, as the REST API and the flags spell them.
#pragma once

#include <string_view>

#include "meshwork/v1/types.pb.h"

namespace meshwork::v1 {

inline std::string_view RoleName(Role role) {
  switch (role) {
    case ROLE_INGEST:
      return "ingest";
    case ROLE_ORIGIN:
      return "origin";
    case ROLE_EDGE:
      return "edge";
    default:
      return "unspecified";
  }
}

// False (and *role untouched) for anything but ingest, origin, edge.
inline bool ParseRole(std::string_view text, Role* role) {
  if (text == "ingest")
    *role = ROLE_INGEST;
  else if (text == "origin")
    *role = ROLE_ORIGIN;
  else if (text == "edge")
    *role = ROLE_EDGE;
  else
    return false;
  return true;
}

}  // namespace meshwork::v1
