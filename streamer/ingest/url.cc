#include "streamer/ingest/url.h"

#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "boost/asio/ip/address.hpp"

namespace meshwork::ingest {
namespace {

constexpr size_t kMaxStreamIdLength = 512;  // SRT's limit for SRTO_STREAMID
constexpr size_t kMinPassphraseLength = 10;
constexpr size_t kMaxPassphraseLength = 79;
constexpr int kMaxLatencyMs = 60000;

class UrlError {
 public:
  explicit UrlError(absl::string_view url)
      : redacted_(RedactUrl(std::string_view(url.data(), url.size()))) {}
  absl::Status operator()(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("input URL \"", redacted_, "\": ", what));
  }

 private:
  std::string redacted_;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes a query component ('+' stays '+': these are not form posts).
bool PercentDecode(absl::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int hi = HexValue(in[i + 1]);
    int lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

bool ParseInt(absl::string_view text, int* value) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool IsIpLiteral(const std::string& host, boost::asio::ip::address* address) {
  boost::system::error_code ec;
  *address = boost::asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

std::string RedactUrl(std::string_view url) {
  std::string out(url);
  size_t query = out.find('?');
  if (query == std::string::npos) return out;
  // Values that are credentials: SRT's passphrase and stream id (often an access key), and the
  // tokens an http:// pull may carry.
  static constexpr std::string_view kSecretKeys[] = {
      "passphrase=", "streamid=", "token=", "pass=", "sid=", "key="};
  for (size_t at = query; at < out.size();) {
    const size_t key = at + 1;  // just after '?' or '&'
    size_t next = out.find('&', key);
    if (next == std::string::npos) next = out.size();
    for (std::string_view secret : kSecretKeys) {
      if (std::string_view(out).substr(key, secret.size()) == secret &&
          next > key + secret.size()) {
        out.replace(key + secret.size(), next - key - secret.size(), "***");
        next = out.find('&', key);
        if (next == std::string::npos) next = out.size();
        break;
      }
    }
    at = next;
  }
  return out;
}

absl::StatusOr<SourceUrl> ParseSourceUrl(std::string_view url_text) {
  const absl::string_view url(url_text.data(), url_text.size());
  const UrlError error(url);
  SourceUrl out;

  size_t scheme_end = url.find("://");
  if (scheme_end == absl::string_view::npos || scheme_end == 0) {
    return error("has no scheme (want udp://, srt:// or http://)");
  }
  std::string scheme = absl::AsciiStrToLower(url.substr(0, scheme_end));
  if (scheme == "udp") {
    out.kind = SourceKind::kUdp;
  } else if (scheme == "srt") {
    out.kind = SourceKind::kSrt;
  } else if (scheme == "http") {
    out.kind = SourceKind::kHttp;
  } else {
    return error(
        absl::StrCat("unsupported scheme \"", scheme, "\" (want udp://, srt:// or http://)"));
  }

  absl::string_view rest = url.substr(scheme_end + 3);
  if (size_t hash = rest.find('#'); hash != absl::string_view::npos) {
    return error("fragments (#...) are not allowed");
  }
  size_t authority_end = rest.find_first_of("/?");
  absl::string_view authority = rest.substr(0, authority_end);
  absl::string_view path_and_query =
      authority_end == absl::string_view::npos ? absl::string_view() : rest.substr(authority_end);
  absl::string_view path = path_and_query.substr(0, path_and_query.find('?'));
  absl::string_view query;
  if (size_t q = path_and_query.find('?'); q != absl::string_view::npos) {
    query = path_and_query.substr(q + 1);
  }

  if (authority.find('@') != absl::string_view::npos) {
    return error("user credentials in the URL are not supported");
  }
  absl::string_view host;
  absl::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == absl::string_view::npos) return error("unterminated '[' in the host");
    host = authority.substr(1, close - 1);
    absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return error("unexpected text after ']'");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    size_t colon = authority.find(':');
    if (colon != absl::string_view::npos &&
        authority.find(':', colon + 1) != absl::string_view::npos) {
      return error("an IPv6 host must be written in brackets, e.g. [::1]:5000");
    }
    host = authority.substr(0, colon);
    if (colon != absl::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (host.empty()) return error("has no host");
  out.host = std::string(host);

  if (has_port) {
    int port = 0;
    if (!ParseInt(port_text, &port) || port < 1 || port > 65535) {
      return error(absl::StrCat("bad port \"", port_text, "\" (want 1..65535)"));
    }
    out.port = static_cast<uint16_t>(port);
  } else if (out.kind == SourceKind::kHttp) {
    out.port = 80;
  } else {
    return error(
        absl::StrCat(scheme, ":// needs a port, e.g. ", scheme, "://", authority, ":5000"));
  }

  std::map<std::string, std::string> params;
  if (out.kind != SourceKind::kHttp && !query.empty()) {
    for (absl::string_view item : absl::StrSplit(query, '&', absl::SkipEmpty())) {
      size_t eq = item.find('=');
      std::string key(item.substr(0, eq));
      if (eq == absl::string_view::npos) {
        return error(absl::StrCat("parameter \"", key, "\" has no value"));
      }
      std::string value;
      if (!PercentDecode(item.substr(eq + 1), &value)) {
        return error(absl::StrCat("bad percent-encoding in parameter \"", key, "\""));
      }
      if (!params.emplace(key, std::move(value)).second) {
        return error(absl::StrCat("parameter \"", key, "\" given twice"));
      }
    }
  }

  boost::asio::ip::address address;
  switch (out.kind) {
    case SourceKind::kUdp: {
      if (!path.empty() && path != "/") return error("udp:// takes no path");
      if (!IsIpLiteral(out.host, &address)) {
        return error(absl::StrCat("udp:// host \"", out.host,
                                  "\" must be an IP address (a local address or a multicast "
                                  "group)"));
      }
      out.multicast = address.is_multicast();
      for (auto& [key, value] : params) {
        if (key == "localaddr") {
          boost::asio::ip::address local;
          if (!IsIpLiteral(value, &local) || !local.is_v4()) {
            return error(absl::StrCat("localaddr \"", value, "\" is not an IPv4 address"));
          }
          if (!out.multicast || !address.is_v4()) {
            return error("localaddr applies only to an IPv4 multicast group");
          }
          out.localaddr = value;
        } else {
          return error(absl::StrCat("unknown udp:// parameter \"", key, "\" (known: localaddr)"));
        }
      }
      break;
    }
    case SourceKind::kSrt: {
      if (!path.empty() && path != "/") return error("srt:// takes no path");
      bool has_mode = false;
      for (auto& [key, value] : params) {
        if (key == "mode") {
          if (value == "listener") {
            out.srt_mode = SrtMode::kListener;
          } else if (value == "caller") {
            out.srt_mode = SrtMode::kCaller;
          } else {
            return error(absl::StrCat("bad mode \"", value, "\" (want listener or caller)"));
          }
          has_mode = true;
        } else if (key == "latency") {
          if (!ParseInt(value, &out.latency_ms) || out.latency_ms < 0 ||
              out.latency_ms > kMaxLatencyMs) {
            return error(absl::StrCat("bad latency \"", value, "\" (want 0..", kMaxLatencyMs,
                                      " milliseconds)"));
          }
        } else if (key == "streamid") {
          if (value.size() > kMaxStreamIdLength) {
            return error(absl::StrCat("streamid longer than ", kMaxStreamIdLength, " bytes"));
          }
          out.streamid = value;
        } else if (key == "passphrase") {
          if (value.size() < kMinPassphraseLength || value.size() > kMaxPassphraseLength) {
            return error(absl::StrCat("passphrase must be ", kMinPassphraseLength, "..",
                                      kMaxPassphraseLength, " characters"));
          }
          out.passphrase = value;
        } else {
          return error(absl::StrCat("unknown srt:// parameter \"", key,
                                    "\" (known: mode, latency, streamid, passphrase)"));
        }
      }
      if (!has_mode) return error("srt:// needs mode=listener or mode=caller");
      if (out.srt_mode == SrtMode::kListener && !IsIpLiteral(out.host, &address)) {
        return error(absl::StrCat("srt:// listener host \"", out.host,
                                  "\" must be a local IP address (e.g. 0.0.0.0)"));
      }
      break;
    }
    case SourceKind::kHttp: {
      std::string target = path.empty() ? std::string("/") : std::string(path);
      if (!query.empty()) absl::StrAppend(&target, "?", query);
      for (char c : target) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
          return error("the path contains spaces or control characters");
        }
      }
      out.target = std::move(target);
      break;
    }
  }
  return out;
}

}  // namespace meshwork::ingest
