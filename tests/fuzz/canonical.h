// Shared property of the REST body fuzz targets: whatever a validator accepts comes back in
// canonical form, and validating that form again gives it back unchanged.
#pragma once

#include "nlohmann/json.hpp"

template <typename Validate>
void CheckCanonical(const nlohmann::json& body, Validate validate) {
  auto first = validate(body);
  if (!first.ok()) return;
  auto second = validate(*first);
  if (!second.ok() || *second != *first) __builtin_trap();
}
