#include "streamer/delivery/viewer_path.h"

#include <charconv>

#include "streamer/store/origin_rules.h"

namespace meshwork::streamer {
namespace {

bool ParseMsn(std::string_view s, int64_t* msn) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *msn);
  return ec == std::errc() && p == s.data() + s.size() && *msn >= 0 && *msn <= kMaxMsn;
}

}  // namespace

std::optional<ViewerPath> ParseViewerPath(std::string_view path,
                                          absl::FunctionRef<bool(std::string_view)> is_stream) {
  std::optional<ViewerPath> out(std::in_place);
  if (!ParseViewerPath(path, is_stream, *out)) return std::nullopt;
  return out;
}

bool ParseViewerPath(std::string_view path, absl::FunctionRef<bool(std::string_view)> is_stream,
                     ViewerPath& t) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return false;
  std::string_view prefix = path.substr(0, slash);
  std::string_view file = path.substr(slash + 1);
  auto ends_with = [&file](std::string_view suffix) {
    return file.size() > suffix.size() && file.substr(file.size() - suffix.size()) == suffix;
  };
  if (file == "index.mpd") {
    if (!is_stream(prefix)) return false;
    t.kind = ViewerPath::kMpd;
    t.stream = prefix;
    return true;
  }
  if (file == "index.m3u8" || file == "index.ll.m3u8") {
    bool ll = file == "index.ll.m3u8";
    if (is_stream(prefix)) {
      t.kind = ll ? ViewerPath::kLlMaster : ViewerPath::kMaster;
      t.stream = prefix;
      return true;
    }
    t.kind = ll ? ViewerPath::kLlMedia : ViewerPath::kMedia;
  } else if (ends_with(".ts") && ParseMsn(file.substr(0, file.size() - 3), &t.msn)) {
    t.kind = ViewerPath::kSegment;
  } else if (file == "init.mp4") {
    t.kind = ViewerPath::kInit;
  } else if (ends_with(".m4s")) {
    std::string_view name = file.substr(0, file.size() - 4);
    size_t dot = name.find('.');
    int64_t part = 0;
    if (dot == std::string_view::npos) {
      if (!ParseMsn(name, &t.msn)) return false;
      t.kind = ViewerPath::kM4s;
    } else {
      if (!ParseMsn(name.substr(0, dot), &t.msn) || !ParseMsn(name.substr(dot + 1), &part) ||
          part > 100'000) {
        return false;
      }
      t.kind = ViewerPath::kPart;
      t.part = static_cast<int>(part);
    }
  } else {
    return false;
  }
  size_t split = prefix.rfind('/');
  // Neither the stream nor the rendition may be empty ("/live//5.ts" names nothing).
  if (split == std::string_view::npos || split == 0 || split + 1 == prefix.size()) {
    return false;
  }
  t.stream = prefix.substr(0, split);
  t.rendition = prefix.substr(split + 1);
  if (!is_stream(t.stream)) return false;
  return true;
}

}  // namespace meshwork::streamer
