// the REST body validators (streamers, zones, streams, VOD, merge patch) on arbitrary
// bytes. Properties: no crash; anything accepted comes back in canonical form, and the
// canonical form validates again to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "central/model/streamer_codec.h"

using meshwork::central::json;

namespace {

template <typename Validate>
void CheckIdempotent(const json& body, Validate validate) {
  auto first = validate(body);
  if (!first.ok()) return;
  auto second = validate(*first);
  if (!second.ok() || *second != *first) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto body = meshwork::central::ParseObjectBody(text);
  if (!body.ok()) return 0;
  using namespace meshwork::central;
  CheckIdempotent(*body, [](const json& b) { return ValidateStreamer(b, "edge-1"); });
  CheckIdempotent(*body, [](const json& b) { return ValidateZone(b, "office-1"); });
  CheckIdempotent(*body, [](const json& b) { return ValidateStream(b, "news/ch1"); });
  CheckIdempotent(*body, [](const json& b) { return ValidateVod(b, "asset"); });
  // As a merge patch on a valid streamer.
  static const json base =
      ValidateStreamer(json{{"hostname", "edge-1.example.net"}, {"role", "edge"}}, "edge-1")
          .value();
  auto patched = PatchStreamer(base, *body, "edge-1");
  if (patched.ok()) {
    auto again = ValidateStreamer(*patched, "edge-1");
    if (!again.ok() || *again != *patched) __builtin_trap();
  }
  return 0;
}
