// D-2: where the archive keeps its files, and the names it accepts. Pure functions; the only
// file names built anywhere in the archive come from here, from validated names and numbers,
// never from request text (D-8).
//
//   {root}/{stream}/{proto}/{rendition}/YYYY/MM/DD/HH/{start_ms}-{duration_ms}.{ts|m4s}
//   {root}/{stream}/fmp4/{rendition}/init/{start_ms}.mp4     (the init in force from start_ms)
//
// where {stream} is StreamDirName(stream): a stream "news/en" is in "news+en".
//
// The hour directories are UTC and keep any one directory small (1 800 files of 2 s
// segments); start_ms is wall-clock time (S-5's program date-time) in Unix milliseconds.
// A file being written is named `.{name}.tmp` in the same directory and renamed when
// complete, so a crash leaves no partial segment under a real name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace meshwork::streamer::archive {

enum class Proto { kTs, kFmp4 };

std::string_view ProtoName(Proto proto);  // "ts" / "fmp4"
std::optional<Proto> ParseProto(std::string_view name);
std::string_view SegmentExtension(Proto proto);  // "ts" / "m4s"

// A stream or rendition name usable as one path element: 1–128 of [A-Za-z0-9._-], not
// starting with '.'.
bool SafeName(std::string_view name);
// A stream name that can be recorded: '/'-separated parts, each a SafeName ("news/en").
bool SafeStreamName(std::string_view stream);
// The directory a stream is recorded in, under the root: its parts joined by '+', a character
// no stream name holds ("news/en" → "news+en"), so that one stream's directory can never lie
// inside another's ("news/ts" is not news's MPEG-TS recording).
std::string StreamDirName(std::string_view stream);

// root/StreamDirName(stream)/proto/rendition
std::filesystem::path TrackDir(const std::filesystem::path& root, std::string_view stream,
                               Proto proto, std::string_view rendition);
std::filesystem::path SegmentPath(const std::filesystem::path& track_dir, Proto proto,
                                  int64_t start_ms, int64_t duration_ms);
std::filesystem::path InitPath(const std::filesystem::path& track_dir, int64_t start_ms);

// "{start}-{duration}.{ext}" → (start_ms, duration_ms); nullopt for anything else (temporary
// files included).
std::optional<std::pair<int64_t, int64_t>> ParseSegmentName(std::string_view name,
                                                            std::string_view extension);
// "{start}.mp4" → start_ms.
std::optional<int64_t> ParseInitName(std::string_view name);

// A decimal integer of at most 15 digits (no sign, no spaces); nullopt otherwise.
std::optional<int64_t> ParseDecimal(std::string_view text);

}  // namespace meshwork::streamer::archive
