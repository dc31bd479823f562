// JSON Merge Patch (T-7) as the REST API applies it, on arbitrary bytes: the body is
// parsed with the depth bound every write uses, then merged into a valid zone, stream and
// streamer and validated. Properties: no crash however the body nests (merging recurses per
// level, which is why the bound exists), and whatever validates is canonical: validating it
// again gives it back unchanged.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "central/model/streamer_codec.h"
#include "tests/fuzz/canonical.h"

using meshwork::central::json;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshwork::central;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto patch = ParseObjectBody(text);
  if (!patch.ok()) return 0;
  static const json zone =
      ValidateZone(json{{"routes", {"10.0.0.0/8"}}, {"fallback_zone", "b"}}, "a").value();
  static const json stream = ValidateStream(json{{"inputs", {"publish://"}},
                                                 {"pipelines", {"a", "b"}},
                                                 {"publish_tokens", {"0123456789abcdef"}}},
                                            "ch1")
                                 .value();
  json merged_zone = zone;
  merged_zone.merge_patch(*patch);
  CheckCanonical(merged_zone, [](const json& b) { return ValidateZone(b, "a"); });
  json merged_stream = MergeStreamPatch(stream, *patch);
  CheckCanonical(merged_stream, [](const json& b) { return ValidateStream(b, "ch1"); });
  static const json streamer =
      ValidateStreamer(json{{"hostname", "edge-1.example.net"}, {"role", "edge"}}, "edge-1")
          .value();
  auto patched = PatchStreamer(streamer, *patch, "edge-1");
  if (patched.ok())
    CheckCanonical(*patched, [](const json& b) { return ValidateStreamer(b, "edge-1"); });
  return 0;
}
