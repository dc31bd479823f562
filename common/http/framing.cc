#include "common/http/framing.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace meshwork::http {

namespace beast_http = boost::beast::http;

absl::Status CheckRequestFraming(const beast_http::request_header<beast_http::fields>& header) {
  auto [first, last] = header.equal_range(beast_http::field::transfer_encoding);
  if (first == last) return absl::OkStatus();
  std::vector<std::string> codings;
  for (auto it = first; it != last; ++it) {
    std::string_view value = it->value();
    for (absl::string_view element :
         absl::StrSplit(absl::string_view(value.data(), value.size()), ',')) {
      absl::string_view trimmed = absl::StripAsciiWhitespace(element);
      if (!trimmed.empty()) codings.push_back(absl::AsciiStrToLower(trimmed));
    }
  }
  if (codings.empty()) {
    return absl::InvalidArgumentError("Transfer-Encoding names no coding");
  }
  if (header.version() < 11) {
    return absl::InvalidArgumentError("Transfer-Encoding is not defined for HTTP/1.0");
  }
  if (codings.back() != "chunked") {
    return absl::InvalidArgumentError(absl::StrCat("Transfer-Encoding must end in chunked (got \"",
                                                   codings.back(),
                                                   "\"): the body length "
                                                   "cannot be determined"));
  }
  codings.pop_back();
  for (const std::string& coding : codings) {
    if (coding == "chunked" || coding.rfind("chunked;", 0) == 0) {
      return absl::InvalidArgumentError("Transfer-Encoding applies chunked more than once");
    }
  }
  if (!codings.empty()) {
    return absl::UnimplementedError(absl::StrCat("Transfer-Encoding \"", codings.front(),
                                                 "\" is not supported; send chunked alone"));
  }
  if (header.find(beast_http::field::content_length) != header.end()) {
    return absl::InvalidArgumentError(
        "Transfer-Encoding and Content-Length together: the body length is ambiguous");
  }
  return absl::OkStatus();
}

std::string HttpDate(int64_t unix_seconds) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char out[40];
  std::snprintf(out, sizeof(out), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return out;
}

std::string RedactedTarget(std::string_view target) {
  const size_t query = target.find('?');
  if (query == std::string_view::npos) return std::string(target);
  static constexpr std::string_view kSecret[] = {"token", "pass", "sid", "passphrase"};
  std::string out(target.substr(0, query + 1));
  bool first = true;
  for (absl::string_view piece : absl::StrSplit(
           absl::string_view(target.data() + query + 1, target.size() - query - 1), '&')) {
    std::string_view pair(piece.data(), piece.size());
    if (!first) out += '&';
    first = false;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    if (eq == std::string_view::npos ||
        std::find(std::begin(kSecret), std::end(kSecret), name) == std::end(kSecret)) {
      out += pair;
      continue;
    }
    const std::string_view value = pair.substr(eq + 1);
    out += name;
    out += "=…";
    if (value.size() > 8) out += value.substr(value.size() - 4);
  }
  return out;
}

std::optional<std::string> PercentDecoded(std::string_view segment) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(segment.size());
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '%') {
      out.push_back(segment[i]);
      continue;
    }
    if (i + 2 >= segment.size()) return std::nullopt;
    const int high = hex(segment[i + 1]), low = hex(segment[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

}  // namespace meshwork::http
