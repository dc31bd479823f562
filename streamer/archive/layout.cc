#include "streamer/archive/layout.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ctime>

namespace meshwork::streamer::archive {

std::string_view ProtoName(Proto proto) { return proto == Proto::kTs ? "ts" : "fmp4"; }

std::optional<Proto> ParseProto(std::string_view name) {
  if (name == "ts") return Proto::kTs;
  if (name == "fmp4") return Proto::kFmp4;
  return std::nullopt;
}

std::string_view SegmentExtension(Proto proto) { return proto == Proto::kTs ? "ts" : "m4s"; }

bool SafeName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool SafeStreamName(std::string_view stream) {
  if (stream.empty() || stream.size() > 1024) return false;
  for (size_t start = 0;;) {
    const size_t slash = stream.find('/', start);
    if (!SafeName(stream.substr(start, slash == std::string_view::npos ? slash : slash - start))) {
      return false;
    }
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::string StreamDirName(std::string_view stream) {
  std::string dir(stream);
  std::replace(dir.begin(), dir.end(), '/', '+');
  return dir;
}

std::filesystem::path TrackDir(const std::filesystem::path& root, std::string_view stream,
                               Proto proto, std::string_view rendition) {
  return root / StreamDirName(stream) / std::string(ProtoName(proto)) / std::string(rendition);
}

std::filesystem::path SegmentPath(const std::filesystem::path& track_dir, Proto proto,
                                  int64_t start_ms, int64_t duration_ms) {
  std::time_t seconds = static_cast<std::time_t>(start_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char hour_dir[32];
  std::snprintf(hour_dir, sizeof hour_dir, "%04d/%02d/%02d/%02d", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour);
  std::string name = std::to_string(start_ms) + "-" + std::to_string(duration_ms) + "." +
                     std::string(SegmentExtension(proto));
  return track_dir / hour_dir / name;
}

std::filesystem::path InitPath(const std::filesystem::path& track_dir, int64_t start_ms) {
  return track_dir / "init" / (std::to_string(start_ms) + ".mp4");
}

std::optional<int64_t> ParseDecimal(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::optional<std::pair<int64_t, int64_t>> ParseSegmentName(std::string_view name,
                                                            std::string_view extension) {
  if (name.size() <= extension.size() + 1 || !name.ends_with(extension) ||
      name[name.size() - extension.size() - 1] != '.') {
    return std::nullopt;
  }
  name.remove_suffix(extension.size() + 1);
  auto dash = name.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  auto start = ParseDecimal(name.substr(0, dash));
  auto duration = ParseDecimal(name.substr(dash + 1));
  if (!start || !duration || *duration == 0) return std::nullopt;
  return std::make_pair(*start, *duration);
}

std::optional<int64_t> ParseInitName(std::string_view name) {
  if (!name.ends_with(".mp4")) return std::nullopt;
  name.remove_suffix(4);
  return ParseDecimal(name);
}

}  // namespace meshwork::streamer::archive
