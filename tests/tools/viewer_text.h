// The text scanners of viewer_sim (a test tool): what a simulated viewer takes from a media
// playlist and an MPD. Plain scanning, not std::regex or an XML parser: with a thousand
// viewers on one thread, parsing time would show up as delay in the measurements. Input is
// a node's answer under test; anything malformed reads as absent (empty, 0, -1, false).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshwork::viewer_sim {

// What a viewer takes from a media playlist.
struct Listing {
  // Listed parts (#EXT-X-PART, "M.P.m4s") in order, then segments ("M.m4s"). Not the
  // preload hint: a hinted part may never exist (the segment ends first), and this viewer
  // only takes what is listed.
  std::vector<std::pair<std::string, bool>> objects;  // name, is_part
  int64_t newest_segment = -1;
  std::string hint;  // "?_HLS_msn=M&_HLS_part=P" of the preload hint; empty when none
};
Listing ParseListing(std::string_view text);

// "123.4.m4s" → true with msn and part (-1 for "123.m4s"); false for anything else. A query
// ("?v=2", L-14) is not part of the name; the viewer requests the URI as listed, query included.
bool ParseObjectName(std::string_view name, int64_t& msn, int& part);

// The URI="…" attribute of a tag line; empty when absent.
std::string_view UriOf(std::string_view line);

// The number after `key` in `text` (0 when absent or malformed).
double NumberAfter(std::string_view text, std::string_view key);

// "2026-12-04T19:00:00.123Z" → ms since the epoch (UTC); -1 when malformed.
int64_t ParseDateTime(std::string_view s);

// The value of attribute `name` in the first element at or after `from`; empty when absent.
std::string Attribute(std::string_view xml, std::string_view name, size_t from = 0);

// "PT12.345S" → seconds (the only form the node writes).
double ParseDuration(const std::string& d);

}  // namespace meshwork::viewer_sim
