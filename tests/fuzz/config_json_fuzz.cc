// the REST body validators (streamers, zones, streams, VOD) on arbitrary
// bytes. Properties: no crash; anything accepted comes back in canonical form, and the
// canonical form validates again to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "central/model/streamer_codec.h"
#include "tests/fuzz/canonical.h"

using meshwork::central::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = meshwork::central::ParseObjectBody(text);
  if (!body.ok()) return 0;
  using namespace meshwork::central;
  CheckCanonical(*body, [](const json& b) { return ValidateStreamer(b, "edge-1"); });
  CheckCanonical(*body, [](const json& b) { return ValidateZone(b, "office-1"); });
  CheckCanonical(*body, [](const json& b) { return ValidateStream(b, "news/ch1"); });
  CheckCanonical(*body, [](const json& b) { return ValidateVod(b, "asset"); });
  return 0;  // as merge patches: merge_patch_fuzz.cc
}
