#include "common/http/response.h"

#include "absl/strings/str_cat.h"
#include "common/status/status_map.h"

namespace meshwork::http {

namespace {

// Length of the valid UTF-8 sequence at the start of `s`, or 0.
size_t Utf8Length(std::string_view s) {
  auto byte = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = byte(0);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// A JSON string literal of `s`; bytes that are not UTF-8 become U+FFFD.
void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else if (c >= 0x80) {
      size_t n = Utf8Length(s.substr(i));
      if (n == 0) {
        out += "\\ufffd";
        ++i;
        continue;
      }
      out.append(s.substr(i, n));
      i += n;
      continue;
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
}

// The M-1 error body, written directly (error answers are the hot path of 404/410 storms):
// the same members, in the same order, as nlohmann's sorted objects give.
Response ErrorText(Status status, std::string_view code, std::string_view message,
                   std::string_view field) {
  std::string body = "{\"error\":{\"code\":";
  AppendJsonString(body, code);
  if (!field.empty()) {
    body += ",\"field\":";
    AppendJsonString(body, field);
  }
  body += ",\"message\":";
  AppendJsonString(body, message);
  absl::StrAppend(&body, ",\"status\":", static_cast<int>(status), "}}\n");
  return MakeResponse(status, std::move(body), "application/json");
}

}  // namespace

Response MakeResponse(Status status, std::string body, std::string_view content_type,
                      unsigned version) {
  Response res{status, version};
  res.set(beast_http::field::content_type, content_type);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response JsonResponse(Status status, const nlohmann::json& body) {
  return MakeResponse(status, body.dump() + "\n", "application/json");
}

Response ErrorResponse(const absl::Status& status) {
  std::string_view message(status.message().data(), status.message().size());
  return ErrorText(static_cast<Status>(HttpStatusFor(status.code())), CodeName(status.code()),
                   message, FieldOf(status));
}

Response ErrorResponse(Status http_status, std::string_view code, std::string_view message) {
  return ErrorText(http_status, code, message, "");
}

}  // namespace meshwork::http
