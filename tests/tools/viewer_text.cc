#include "tests/tools/viewer_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace meshwork::viewer_sim {

bool ParseObjectName(std::string_view name, int64_t& msn, int& part) {
  name = name.substr(0, name.find('?'));
  if (!name.ends_with(".m4s")) return false;
  name.remove_suffix(4);
  auto dot = name.find('.');
  auto digits = name.substr(0, dot);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), msn);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) return false;
  part = -1;
  if (dot == std::string_view::npos) return true;
  auto rest = name.substr(dot + 1);
  auto [end2, ec2] = std::from_chars(rest.data(), rest.data() + rest.size(), part);
  return ec2 == std::errc() && end2 == rest.data() + rest.size() && !rest.empty();
}

std::string_view UriOf(std::string_view line) {
  auto at = line.find("URI=\"");
  if (at == std::string_view::npos) return {};
  line.remove_prefix(at + 5);
  return line.substr(0, line.find('"'));
}

Listing ParseListing(std::string_view text) {
  Listing out;
  std::vector<std::pair<std::string, bool>> segments;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    int64_t msn = 0;
    int part = 0;
    if (line.starts_with("#EXT-X-PART:")) {
      auto uri = UriOf(line);
      if (ParseObjectName(uri, msn, part) && part >= 0) out.objects.emplace_back(uri, true);
    } else if (line.starts_with("#EXT-X-PRELOAD-HINT:TYPE=PART")) {
      if (ParseObjectName(UriOf(line), msn, part) && part >= 0) {
        out.hint = "?_HLS_msn=" + std::to_string(msn) + "&_HLS_part=" + std::to_string(part);
      }
    } else if (!line.starts_with("#") && ParseObjectName(line, msn, part) && part < 0) {
      segments.emplace_back(line, false);
      out.newest_segment = std::max(out.newest_segment, msn);
    }
  }
  out.objects.insert(out.objects.end(), segments.begin(), segments.end());
  return out;
}

double NumberAfter(std::string_view text, std::string_view key) {
  auto at = text.find(key);
  if (at == std::string_view::npos) return 0;
  return std::atof(std::string(text.substr(at + key.size(), 32)).c_str());
}

int64_t ParseDateTime(std::string_view s) {
  std::tm tm{};
  int ms = 0;
  std::string text(s);
  char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!rest) return -1;
  if (*rest == '.') ms = static_cast<int>(std::lround(std::atof(rest) * 1000));
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

std::string Attribute(std::string_view xml, std::string_view name, size_t from) {
  auto at = xml.find(" " + std::string(name) + "=\"", from);
  if (at == std::string_view::npos) return {};
  at += name.size() + 3;
  return std::string(xml.substr(at, xml.find('"', at) - at));
}

double ParseDuration(const std::string& d) {
  return d.starts_with("PT") ? std::atof(d.c_str() + 2) : 0;
}

}  // namespace meshwork::viewer_sim
