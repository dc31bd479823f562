#include "streamer/access/backend_answer.h"

#include "common/auth/login.h"
#include "common/json/bounded_json.h"
#include "nlohmann/json.hpp"

namespace meshwork::streamer {

namespace {

bool IsReasonCode(std::string_view reason) {
  if (reason.empty() || reason.size() > 64) return false;
  for (char c : reason) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

BackendAnswer Error(std::string why) {
  BackendAnswer answer;
  answer.reason = std::move(why);
  return answer;
}

// A whole integer member in [lo, hi]; nullopt when absent; false in `ok` when malformed.
std::optional<int64_t> Integer(const nlohmann::json& o, const char* key, int64_t lo, int64_t hi,
                               bool& ok) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) {
    ok = false;
    return std::nullopt;
  }
  // nlohmann keeps values above INT64_MAX as unsigned: compare as such first.
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi)) {
    ok = false;
    return std::nullopt;
  }
  int64_t v = it->get<int64_t>();
  if (v < lo || v > hi) {
    ok = false;
    return std::nullopt;
  }
  return v;
}

}  // namespace

BackendAnswer ParseBackendAnswer(int status, std::string_view body) {
  if (body.size() > kMaxBackendAnswerBytes) return Error("answer_too_large");
  if (status >= 400 && status < 500) {
    BackendAnswer answer;
    answer.verdict = BackendAnswer::Verdict::kRefuse;
    answer.reason = "backend_denied";
    auto json = ParseBoundedJson(body, "answer", 8);
    if (json.ok() && json->is_object()) {
      if (auto r = json->find("reason");
          r != json->end() && r->is_string() && IsReasonCode(r->get_ref<const std::string&>())) {
        answer.reason = r->get<std::string>();
      }
    }
    return answer;
  }
  if (status != 200) return Error("status");
  BackendAnswer answer;
  answer.verdict = BackendAnswer::Verdict::kAdmit;
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return answer;  // an empty 200 admits
  auto json = ParseBoundedJson(body, "answer", 8);
  if (!json.ok() || !json->is_object()) return Error("malformed");
  if (auto l = json->find("login"); l != json->end() && !l->is_null()) {
    if (!l->is_string() || !auth::IsValidLogin(l->get_ref<const std::string&>()))
      return Error("login");
    answer.login = l->get<std::string>();
  }
  bool ok = true;
  if (auto m = Integer(*json, "max_sessions", 1, 100'000, ok)) answer.max_sessions = *m;
  answer.ttl_s = Integer(*json, "ttl_s", 0, 86'400, ok);
  if (!ok) return Error("malformed");
  if (auto d = json->find("dvr"); d != json->end() && !d->is_null()) {
    if (!d->is_boolean()) return Error("malformed");
    answer.dvr = d->get<bool>();
  }
  return answer;
}

}  // namespace meshwork::streamer
