#include "central/model/dvr_config.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "central/model/json_fields.h"
#include "central/model/object_codecs.h"
#include "common/status/status_macros.h"
#include "common/status/status_map.h"
#include "common/stream/defaults.h"

namespace meshwork::central {

namespace {

constexpr std::string_view kDvrMembers[] = {"root",      "depth_s", "protocols",
                                            "max_bytes", "fsync",   "edges"};

// An absolute path without "." or ".." elements or control characters (D-8).
bool SafeRoot(std::string_view root) {
  if (root.empty() || root.size() > 512 || root.front() != '/') return false;
  for (char c : root) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  size_t at = 0;
  while (at <= root.size()) {
    size_t next = root.find('/', at);
    if (next == std::string_view::npos) next = root.size();
    std::string_view element = root.substr(at, next - at);
    if (element == "." || element == "..") return false;
    at = next + 1;
  }
  return true;
}

}  // namespace

absl::Status ResolveDvr(const nlohmann::json& body, nlohmann::json& out) {
  auto it = body.find("dvr");
  if (it == body.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) return InvalidField("dvr", "must be an object {root, depth_s, protocols}");
  RETURN_IF_ERROR(RejectUnknownMembers(*it, kDvrMembers, "dvr"));
  nlohmann::json dvr;
  auto root = it->find("root");
  if (root == it->end() || !root->is_string() || !SafeRoot(root->get<std::string>())) {
    return InvalidField("dvr.root",
                        "must be an absolute directory without . or .. elements (≤ 512 bytes)");
  }
  dvr["root"] = *root;
  dvr["depth_s"] = stream_defaults::kDvrDepthS;
  if (auto d = it->find("depth_s"); d != it->end() && !d->is_null()) {
    if (!d->is_number_integer() || d->get<int64_t>() < kMinDvrDepthS ||
        d->get<int64_t>() > kMaxDvrDepthS) {
      return InvalidField("dvr.depth_s", absl::StrCat("must be an integer in [", kMinDvrDepthS,
                                                      ", ", kMaxDvrDepthS, "] seconds"));
    }
    dvr["depth_s"] = *d;
  }
  nlohmann::json protocols = nlohmann::json::array({"ts", "fmp4"});
  if (auto p = it->find("protocols"); p != it->end() && !p->is_null()) {
    if (!p->is_array() || p->empty() || p->size() > 2) {
      return InvalidField("dvr.protocols", "must be a non-empty array of \"ts\" and \"fmp4\"");
    }
    bool ts = false, fmp4 = false;
    for (const auto& name : *p) {
      if (name == "ts" && !ts) {
        ts = true;
      } else if (name == "fmp4" && !fmp4) {
        fmp4 = true;
      } else {
        return InvalidField("dvr.protocols", "elements are \"ts\" or \"fmp4\", each at most once");
      }
    }
    protocols = nlohmann::json::array();
    if (ts) protocols.push_back("ts");
    if (fmp4) protocols.push_back("fmp4");
  }
  dvr["protocols"] = std::move(protocols);
  if (auto b = it->find("max_bytes"); b != it->end() && !b->is_null()) {
    if (!b->is_number_unsigned() || b->get<uint64_t>() < (1u << 20)) {
      return InvalidField("dvr.max_bytes", "must be an integer of at least 1048576 bytes");
    }
    dvr["max_bytes"] = *b;
  }
  dvr["fsync"] = false;
  if (auto f = it->find("fsync"); f != it->end() && !f->is_null()) {
    if (!f->is_boolean()) return InvalidField("dvr.fsync", "must be true or false");
    dvr["fsync"] = *f;
  }
  // Edges that relay the stream keep their own copy only when asked (else they relay
  // archive requests upstream).
  dvr["edges"] = false;
  if (auto e = it->find("edges"); e != it->end() && !e->is_null()) {
    if (!e->is_boolean()) return InvalidField("dvr.edges", "must be true or false");
    dvr["edges"] = *e;
  }
  out["dvr"] = std::move(dvr);
  return absl::OkStatus();
}

}  // namespace meshwork::central
