#include "common/http/gunzip.h"

#include <catch2/catch.hpp>
#include <string>

#include "common/http/content.h"

namespace meshwork::http::gunzip_test {
namespace {

std::string Playlist(int lines) {
  std::string text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n";
  for (int i = 0; i < lines; ++i) {
    text += "#EXT-X-PART:DURATION=0.5,URI=\"" + std::to_string(1000 + i) + ".0.m4s?v=1\"\n";
  }
  return text;
}

TEST_CASE("P-16 a gzip playlist from upstream inflates to the same text, smaller on the wire") {
  const std::string text = Playlist(200);
  const std::string wire = Gzip(text);
  CHECK(wire.size() * 4 < text.size());
  auto back = Gunzip(wire, 1 << 20);
  REQUIRE(back.ok());
  CHECK(*back == text);
  // Exactly at the limit is still whole.
  auto at_limit = Gunzip(wire, text.size());
  REQUIRE(at_limit.ok());
  CHECK(*at_limit == text);
  CHECK(Gunzip(Gzip(""), 16).value().empty());
}

TEST_CASE("P-16 a gzip body from upstream that inflates past the limit is refused") {
  const std::string bomb = Gzip(std::string(4 << 20, 'a'));  // ~4 KiB on the wire
  auto r = Gunzip(bomb, 1 << 20);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::IsResourceExhausted(r.status()));
  CHECK(absl::IsResourceExhausted(Gunzip(Gzip(Playlist(50)), Playlist(50).size() - 1).status()));
}

TEST_CASE("P-16 truncated, corrupt, trailing or non-gzip bodies from upstream are errors") {
  const std::string wire = Gzip(Playlist(100));
  CHECK(absl::IsDataLoss(Gunzip(wire.substr(0, wire.size() / 2), 1 << 20).status()));
  CHECK(absl::IsDataLoss(Gunzip(wire.substr(0, wire.size() - 4), 1 << 20).status()));
  std::string bad_crc = wire;
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // the CRC-32 in the trailer
  CHECK(absl::IsDataLoss(Gunzip(bad_crc, 1 << 20).status()));
  CHECK(absl::IsDataLoss(Gunzip(wire + "x", 1 << 20).status()));
  CHECK_FALSE(Gunzip("#EXTM3U\n", 1 << 20).ok());
  CHECK_FALSE(Gunzip("", 1 << 20).ok());
}

}  // namespace
}  // namespace meshwork::http::gunzip_test
