#include "streamer/config/stream_config.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log/log.h"

namespace meshwork::streamer {

using json = nlohmann::json;

namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Reads members of one JSON object; a member present with the wrong type is noted (by its
// path) and reads as absent.
class Reader {
 public:
  explicit Reader(std::vector<std::string>* ignored) : ignored_(ignored) {}

  const json* Find(const json& o, const char* key, const std::string& /*path*/) {
    if (!o.is_object()) return nullptr;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return nullptr;
    return &*it;
  }
  std::optional<int64_t> Int(const json& o, const char* key, const std::string& path = "") {
    const json* v = Find(o, key, path);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) return Ignore<int64_t>(path, key);
    return v->get<int64_t>();
  }
  std::optional<std::string> String(const json& o, const char* key, const std::string& path = "") {
    const json* v = Find(o, key, path);
    if (!v) return std::nullopt;
    if (!v->is_string()) return Ignore<std::string>(path, key);
    return v->get<std::string>();
  }
  std::optional<bool> Bool(const json& o, const char* key, const std::string& path = "") {
    const json* v = Find(o, key, path);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return Ignore<bool>(path, key);
    return v->get<bool>();
  }
  // An array member (empty when absent or not an array).
  const json& Array(const json& o, const char* key, const std::string& path = "") {
    static const json kEmpty = json::array();
    const json* v = Find(o, key, path);
    if (!v) return kEmpty;
    if (!v->is_array()) {
      Note(path, key);
      return kEmpty;
    }
    return *v;
  }
  const json& Object(const json& o, const char* key, const std::string& path = "") {
    static const json kEmpty = json::object();
    const json* v = Find(o, key, path);
    if (!v) return kEmpty;
    if (!v->is_object()) {
      Note(path, key);
      return kEmpty;
    }
    return *v;
  }
  // The strings of an array member; other entries are noted and skipped.
  std::vector<std::string> Strings(const json& o, const char* key, const std::string& path = "") {
    std::vector<std::string> out;
    for (const auto& v : Array(o, key, path)) {
      if (v.is_string()) {
        out.push_back(v.get<std::string>());
      } else {
        Note(path, absl::StrCat(key, "[]"));
      }
    }
    return out;
  }
  void Note(const std::string& path, std::string_view key) {
    ignored_->push_back(path.empty() ? std::string(key) : path + "." + std::string(key));
  }

 private:
  template <typename T>
  std::optional<T> Ignore(const std::string& path, std::string_view key) {
    Note(path, key);
    return std::nullopt;
  }
  std::vector<std::string>* ignored_;
};

MsnRange ReadRange(Reader& r, const json& o, const std::string& path) {
  MsnRange range;
  if (!o.is_object()) {
    r.Note("", path);
    return range;
  }
  range.pipeline = r.String(o, "pipeline", path);
  range.region = r.String(o, "region", path);
  range.from_msn = r.Int(o, "from_msn", path);
  range.to_msn = r.Int(o, "to_msn", path);
  return range;
}

// S-5: "timeline_anchor": {"t90k", "wall_ms"} or null.
std::optional<TimelineAnchor> ReadAnchor(Reader& r, const json& object) {
  auto it = object.find("timeline_anchor");
  if (it == object.end() || it->is_null()) return std::nullopt;
  std::optional<int64_t> t90k, wall;
  if (it->is_object()) {
    t90k = r.Int(*it, "t90k", "timeline_anchor");
    wall = r.Int(*it, "wall_ms", "timeline_anchor");
  }
  if (!t90k || !wall || !IsPlausibleAnchor({*t90k, *wall})) {
    r.Note("", "timeline_anchor");
    return std::nullopt;
  }
  return TimelineAnchor{*t90k, *wall};
}

void ReadTiming(Reader& r, const json& object, StreamConfig& c) {
  const json& tmpl = r.Object(object, "template");
  // Central resolves both the top-level lengths and the template's to one value; the
  // template's wins here too when a (hand-made) object differs.
  c.segment_ms = static_cast<int>(
      r.Int(tmpl, "segment_ms", "template")
          .value_or(r.Int(object, "segment_ms").value_or(stream_defaults::kSegmentMs)));
  if (c.segment_ms <= 0) {
    r.Note("", "segment_ms");
    c.segment_ms = stream_defaults::kSegmentMs;
  }
  c.part_ms =
      static_cast<int>(r.Int(tmpl, "part_ms", "template")
                           .value_or(r.Int(object, "part_ms").value_or(stream_defaults::kPartMs)));
  c.live_window =
      static_cast<int>(r.Int(object, "live_window").value_or(stream_defaults::kLiveWindow));
  c.input_timeout_ms = static_cast<int>(
      r.Int(object, "input_timeout_ms").value_or(stream_defaults::kInputTimeoutMs));
  c.tmpl.segment_ms = c.segment_ms;
  c.tmpl.part_ms = c.part_ms;
  // A configured start is never negative (central's validation); absent, null or negative
  // means "derive it from the first publish".
  const int64_t start = r.Int(tmpl, "availability_start", "template").value_or(-1);
  c.tmpl.availability_start_ms = start >= 0 ? start : Template::kUnknownStart;
  c.tmpl.retry_deadline_ms =
      static_cast<int>(r.Int(tmpl, "retry_deadline_ms", "template").value_or(c.segment_ms));
  c.tmpl.grace_ms =
      static_cast<int>(r.Int(tmpl, "grace_ms", "template").value_or(stream_defaults::kGraceMs));
}

void ReadOrigin(Reader& r, const json& object, StreamConfig& c) {
  c.pipelines = r.Strings(object, "pipelines");
  const json& masks = r.Array(object, "masks");
  for (size_t i = 0; i < masks.size(); ++i) {
    c.masks.push_back(ReadRange(r, masks[i], absl::StrCat("masks[", i, "]")));
  }
  c.version = static_cast<uint64_t>(std::max<int64_t>(1, r.Int(object, "version").value_or(1)));
  const json& ranges = r.Array(object, "range_versions");
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string path = absl::StrCat("range_versions[", i, "]");
    if (!ranges[i].is_object()) {
      r.Note("", path);
      continue;
    }
    RangeVersion rv;
    rv.range = ReadRange(r, ranges[i], path);
    rv.version =
        static_cast<uint64_t>(std::max<int64_t>(0, r.Int(ranges[i], "version", path).value_or(0)));
    c.range_versions.push_back(std::move(rv));
  }
}

void ReadOtt(Reader& r, const json& object, StreamConfig& c) {
  c.ott.stale_after_ms = stream_defaults::kOttStaleSegments * c.segment_ms;
  const json& ott = r.Object(object, "ott");
  c.ott.enabled = r.Bool(ott, "enabled", "ott").value_or(false);
  c.ott.group = r.String(ott, "group", "ott").value_or("");
  if (auto backup = r.String(ott, "backup", "ott")) c.ott.offered = *backup != "not_offered";
  if (auto stale = r.Int(ott, "stale_after_ms", "ott"))
    c.ott.stale_after_ms = static_cast<int>(*stale);
  if (c.ott.group.empty()) c.ott.enabled = false;
}

void ReadDvr(Reader& r, const json& object, StreamConfig& c) {
  const json* dvr = r.Find(object, "dvr", "");
  if (!dvr) return;
  if (!dvr->is_object()) return r.Note("", "dvr");
  auto root = r.String(*dvr, "root", "dvr");
  if (!root || !std::filesystem::path(*root).is_absolute()) return r.Note("", "dvr.root");
  DvrConfig out;
  out.root = *root;
  out.depth_s = r.Int(*dvr, "depth_s", "dvr").value_or(stream_defaults::kDvrDepthS);
  if (r.Find(*dvr, "protocols", "dvr")) {  // the listed ones only
    out.ts = out.fmp4 = false;
    for (const auto& name : r.Strings(*dvr, "protocols", "dvr")) {
      if (name == "ts") out.ts = true;
      if (name == "fmp4") out.fmp4 = true;
    }
  }
  if (const json* b = r.Find(*dvr, "max_bytes", "dvr")) {
    if (b->is_number_unsigned()) {
      out.max_bytes = b->get<uint64_t>();
    } else {
      r.Note("dvr", "max_bytes");
    }
  }
  out.fsync = r.Bool(*dvr, "fsync", "dvr").value_or(false);
  out.edges = r.Bool(*dvr, "edges", "dvr").value_or(false);
  c.dvr = std::move(out);
}

// the backend of a `backend` policy; false (noted) when it cannot be read.
bool ReadBackend(Reader& r, const json& access, AccessBackend& out) {
  const json* backend = r.Find(access, "backend", "access");
  if (!backend || !backend->is_object()) {
    r.Note("access", "backend");
    return false;
  }
  auto text = r.String(*backend, "url", "access.backend");
  auto url = text ? net::ParseHttpUrl(*text) : absl::InvalidArgumentError("missing");
  if (!url.ok()) {
    r.Note("access.backend", "url");
    return false;
  }
  out.url = std::move(*url);
  auto number = [&](const char* key, uint64_t fallback, uint64_t max) -> std::optional<uint64_t> {
    const json* v = r.Find(*backend, key, "access.backend");
    if (!v) return fallback;
    if (!v->is_number_unsigned() || v->get<uint64_t>() == 0 || v->get<uint64_t>() > max) {
      r.Note("access.backend", key);
      return std::nullopt;
    }
    return v->get<uint64_t>();
  };
  auto timeout = number("timeout_ms", 2000, 30'000);
  auto ttl = number("ttl_s", 60, 86'400);
  if (!timeout || !ttl) return false;
  out.timeout = std::chrono::milliseconds(*timeout);
  out.ttl = std::chrono::seconds(*ttl);
  auto on_error = r.String(*backend, "on_error", "access.backend").value_or("deny");
  if (on_error != "deny" && on_error != "allow") {
    r.Note("access.backend", "on_error");
    return false;
  }
  out.allow_on_error = on_error == "allow";
  return true;
}

// A-1, fail closed: anything but a readable policy refuses the stream.
void ReadAccess(Reader& r, const json& object, StreamConfig& c) {
  const json* access = r.Find(object, "access", "");
  if (!access) return;  // open
  c.access.mode = AccessConfig::Mode::kRefuse;
  if (!access->is_object()) return r.Note("", "access");
  auto mode = r.String(*access, "mode", "access").value_or("open");
  auto cidrs = [&](const char* key, net::CidrSet& out) {
    const json* list = r.Find(*access, key, "access");
    if (!list) return true;
    std::vector<std::string> texts;
    if (list->is_array()) {
      for (const auto& t : *list) {
        if (!t.is_string()) return false;
        texts.push_back(t.get<std::string>());
      }
    }
    auto parsed = net::CidrSet::Parse(texts, key);
    if (!list->is_array() || !parsed.ok()) return false;
    out = std::move(*parsed);
    return true;
  };
  if (!cidrs("allow_cidrs", c.access.allow)) return r.Note("access", "allow_cidrs");
  if (!cidrs("deny_cidrs", c.access.deny)) return r.Note("access", "deny_cidrs");
  if (const json* max = r.Find(*access, "max_sessions_per_login", "access")) {
    if (!max->is_number_unsigned() || max->get<uint64_t>() == 0) {
      return r.Note("access", "max_sessions_per_login");
    }
    c.access.max_sessions_per_login = max->get<uint64_t>();
  }
  if (mode == "open") {
    c.access.mode = AccessConfig::Mode::kOpen;
  } else if (mode == "token") {
    c.access.mode = AccessConfig::Mode::kToken;
  } else if (mode == "backend") {
    if (!ReadBackend(r, *access, c.access.backend)) return;
    c.access.mode = AccessConfig::Mode::kBackend;
  } else {
    r.Note("access", "mode");  // a mode this node does not know: refused
  }
}

void ReadPublish(Reader& r, const json& object, StreamConfig& c) {
  c.publish_tokens = r.Strings(object, "publish_tokens");
  const json& by_pipeline = r.Object(object, "pipeline_tokens");
  for (const auto& [pipeline, list] : by_pipeline.items()) {
    c.pipeline_tokens[pipeline] = r.Strings(by_pipeline, pipeline.c_str(), "pipeline_tokens");
  }
  const json& targets = r.Array(object, "publish");
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string path = absl::StrCat("publish[", i, "]");
    PublishTargetConfig t;
    t.to = r.String(targets[i], "to", path).value_or("");
    t.pipeline = r.String(targets[i], "pipeline", path).value_or("");
    t.from = r.String(targets[i], "from", path).value_or("");
    if (t.to.empty() || t.pipeline.empty()) {
      r.Note("", path);
      continue;
    }
    c.publish.push_back(std::move(t));
  }
}

}  // namespace

int64_t Template::Due(int64_t msn, int part) const {
  int64_t segment_end = base() + (msn + 1) * segment_ms;
  if (part < 0 || part_ms <= 0) return segment_end;
  return std::min(segment_end, base() + msn * segment_ms + (part + 1) * part_ms);
}

int64_t Template::ProducingMsn(int64_t now_ms) const {
  return FloorDiv(now_ms - base(), segment_ms);
}

int64_t Template::StartFor(int64_t msn, int64_t published_ms) const {
  return published_ms - (msn + 1) * segment_ms;
}

bool StreamConfig::SamePackaging(const StreamConfig& o) const {
  return inputs == o.inputs && segment_ms == o.segment_ms && part_ms == o.part_ms &&
         live_window == o.live_window && input_timeout_ms == o.input_timeout_ms && cors == o.cors;
}

bool StreamConfig::PublishNeedsToken(const std::string&) const {
  // M-3: a stream with any token takes no publish without one — a pipeline's token admits
  // that pipeline's objects; pushes, notifications and other pipelines need a stream token.
  if (!publish_tokens.empty()) return true;
  return std::any_of(pipeline_tokens.begin(), pipeline_tokens.end(),
                     [](const auto& entry) { return !entry.second.empty(); });
}

std::string StreamConfig::PublishTokenFor(const std::string& pipeline) const {
  if (auto it = pipeline_tokens.find(pipeline);
      it != pipeline_tokens.end() && !it->second.empty()) {
    return it->second.front();
  }
  return publish_tokens.empty() ? "" : publish_tokens.front();
}

std::shared_ptr<const StreamConfig> ParseStreamConfig(const std::string& name,
                                                      const nlohmann::json& object) {
  auto c = std::make_shared<StreamConfig>();
  c->name = name;
  std::vector<std::string> ignored;
  Reader r(&ignored);
  static const json kNoMembers = json::object();
  if (!object.is_object()) r.Note("", "(the stream object)");
  const json& o = object.is_object() ? object : kNoMembers;
  c->inputs = r.Strings(o, "inputs");
  if (c->inputs.empty()) c->inputs.push_back("publish://");  // push is the default
  ReadTiming(r, o, *c);
  if (auto cors = r.String(o, "cors")) c->cors = *cors;
  ReadOrigin(r, o, *c);
  c->timeline_anchor = ReadAnchor(r, o);
  ReadOtt(r, o, *c);
  ReadDvr(r, o, *c);
  ReadPublish(r, o, *c);
  ReadAccess(r, o, *c);
  if (!ignored.empty()) {
    // Central validates every member: this is a bug or tampering, never a viewer's input.
    log::Warn("stream_config_member_ignored",
              {{"stream", name}, {"members", absl::StrJoin(ignored, ",")}});
  }
  return c;
}

}  // namespace meshwork::streamer
