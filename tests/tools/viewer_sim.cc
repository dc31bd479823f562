// Simulated LL-HLS viewers for the all-hands test (P-16) and the relay benchmark (P-13).
//
//   viewer_sim --target HOST:PORT --path /STREAM/v1/index.ll.m3u8 --viewers N --seconds S
//              [--probe HOST:PORT]
//
// Each viewer keeps one HTTP/1.1 connection and does what a low-latency player does: it
// reads the media playlist, then asks for it again blocking on the preload hint
// (`_HLS_msn=M&_HLS_part=P`), and fetches what it has not fetched yet from the live edge it
// first saw on: every part of the segment in progress, and every segment once complete. Viewers
// start spread over the first second. After S seconds it prints one line:
//
//   RESULT {"viewers":…,"requests":…,"ok":…,"errors":…,"statuses":{"404":…},
//           "connect_errors":…,"bytes":…,"parts":…,"segments":…,"playlists":…}
//
// An error is any answer other than 200 or a broken connection. With --probe, one more viewer
// follows the same path on the probe address (the upstream itself), and the result adds the
// delay each viewer's part answers had over the probe's answer for the same part (time of the
// response header's arrival), in ms: "added_ms":{"n":…,"p50":…,"p99":…,"max":…} (P-13).
// Single-threaded (asio coroutines); loopback use only.
#include <sys/resource.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string host;
  std::string port;
  std::string probe_host;  // empty: no probe
  std::string probe_port;
  std::string path;
  int viewers = 10;
  double seconds = 10;
};

struct Totals {
  uint64_t requests = 0, ok = 0, errors = 0, connect_errors = 0, bytes = 0;
  uint64_t parts = 0, segments = 0, playlists = 0;
  std::map<int, uint64_t> statuses;       // non-200 answers
  std::vector<std::string> first_errors;  // "STATUS TARGET" of the first few
  // --probe: when each part's answer header arrived, for the probe and for the viewers (ms
  // since the start).
  std::map<std::string, double> probe_part_ms;
  std::vector<std::pair<std::string, double>> viewer_part_ms;
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "viewer_sim: " << why
            << "\nusage: viewer_sim --target HOST:PORT --path PATH --viewers N --seconds S\n";
  std::exit(2);
}

// "HOST:PORT" → host and port.
std::pair<std::string, std::string> SplitTarget(const std::string& value, const char* flag) {
  auto colon = value.rfind(':');
  if (colon == std::string::npos) Usage(std::string(flag) + " must be HOST:PORT");
  return {value.substr(0, colon), value.substr(colon + 1)};
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i], value = argv[i + 1];
    if (name == "--target") {
      std::tie(o.host, o.port) = SplitTarget(value, "--target");
    } else if (name == "--probe") {
      std::tie(o.probe_host, o.probe_port) = SplitTarget(value, "--probe");
    } else if (name == "--path") {
      o.path = value;
    } else if (name == "--viewers") {
      o.viewers = std::atoi(value.c_str());
    } else if (name == "--seconds") {
      o.seconds = std::atof(value.c_str());
    } else {
      Usage("unknown option " + name);
    }
  }
  if (o.host.empty() || o.path.empty() || o.viewers <= 0 || o.seconds <= 0) Usage("bad options");
  return o;
}

// "/a/b/v1/index.ll.m3u8" → "/a/b/v1/"
std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/') + 1); }

// One GET on a kept connection; the body, or nullopt after an error (counted). When
// `header_at` is given it receives when the answer's header arrived. A plain function, not a
// lambda: GCC 12 mishandles temporaries around co_await in lambdas.
asio::awaitable<std::optional<std::string>> Get(beast::tcp_stream& stream,
                                                beast::flat_buffer& buffer, const std::string& host,
                                                const std::string& target, Totals& totals,
                                                Clock::time_point* header_at = nullptr) {
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "meshwork-viewer-sim");
  ++totals.requests;
  std::optional<std::string> out;
  try {
    stream.expires_after(std::chrono::seconds(10));
    co_await http::async_write(stream, req, asio::use_awaitable);
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    co_await http::async_read_header(stream, buffer, parser, asio::use_awaitable);
    if (header_at) *header_at = Clock::now();
    co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
    auto& res = parser.get();
    if (res.result_int() != 200) {
      ++totals.errors;
      ++totals.statuses[res.result_int()];
      if (totals.first_errors.size() < 5) {
        totals.first_errors.push_back(std::to_string(res.result_int()) + " " + target);
      }
    } else {
      ++totals.ok;
      totals.bytes += res.body().size();
      out = std::move(res.body());
    }
  } catch (const std::exception&) {
    ++totals.errors;
    ++totals.statuses[0];
  }
  co_return out;
}

// One viewer; `probe` records its part times as the reference (--probe).
asio::awaitable<void> Viewer(const Options& o, tcp::endpoint endpoint, Totals& totals,
                             Clock::time_point start, Clock::time_point end,
                             std::chrono::milliseconds delay, bool probe) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  timer.expires_after(delay);
  co_await timer.async_wait(asio::use_awaitable);
  beast::tcp_stream stream(executor);
  try {
    co_await stream.async_connect(endpoint, asio::use_awaitable);
  } catch (const std::exception&) {
    ++totals.connect_errors;
    ++totals.errors;
    co_return;
  }
  beast::flat_buffer buffer;
  std::set<std::string> fetched;
  std::optional<std::string> hint_query;
  int64_t floor_msn = -1;  // objects before this msn are history, not fetched
  // Listed parts only (#EXT-X-PART), not the preload hint: a hinted part may never exist
  // (the segment ends first), and this viewer only takes what is listed.
  static const std::regex kPart("#EXT-X-PART:[^\n]*URI=\"(\\d+)\\.(\\d+)\\.m4s\"");
  static const std::regex kSegment("\n(\\d+)\\.m4s");
  static const std::regex kHint("PRELOAD-HINT:TYPE=PART,URI=\"(\\d+)\\.(\\d+)\\.m4s\"");
  const std::string dir = DirOf(o.path);
  while (Clock::now() < end) {
    std::string target = o.path;
    if (hint_query) target += *hint_query;
    auto playlist = co_await Get(stream, buffer, probe ? o.probe_host : o.host, target, totals);
    if (!playlist) break;
    ++totals.playlists;
    const std::string& text = *playlist;
    std::vector<std::pair<std::string, bool>> listed;  // name, is_part
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kPart);
         it != std::sregex_iterator(); ++it) {
      listed.emplace_back((*it)[1].str() + "." + (*it)[2].str() + ".m4s", true);
    }
    int64_t newest_segment = -1;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kSegment);
         it != std::sregex_iterator(); ++it) {
      listed.emplace_back((*it)[1].str() + ".m4s", false);
      newest_segment = std::max<int64_t>(newest_segment, std::stoll((*it)[1].str()));
    }
    if (floor_msn < 0) floor_msn = newest_segment;  // start at the live edge
    for (const auto& [name, is_part] : listed) {
      // Like a player at the live edge: the parts of the segment in progress, and each
      // segment once complete (parts of complete segments are history to it).
      int64_t msn = std::stoll(name);
      if (msn < floor_msn || fetched.contains(name)) continue;
      if (is_part && msn <= newest_segment) continue;
      fetched.insert(name);
      std::string object = dir + name;
      Clock::time_point header_at;
      auto body =
          co_await Get(stream, buffer, probe ? o.probe_host : o.host, object, totals, &header_at);
      if (!body) break;
      if (is_part && !o.probe_host.empty()) {
        double at = std::chrono::duration<double, std::milli>(header_at - start).count();
        if (probe) {
          totals.probe_part_ms[name] = at;
        } else {
          totals.viewer_part_ms.emplace_back(name, at);
        }
      }
      ++(is_part ? totals.parts : totals.segments);
    }
    std::smatch m;
    if (!std::regex_search(text, m, kHint)) break;
    hint_query = "?_HLS_msn=" + m[1].str() + "&_HLS_part=" + m[2].str();
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  asio::io_context io;
  tcp::resolver resolver(io);
  auto endpoint = *resolver.resolve(o.host, o.port).begin();
  Totals totals;
  auto start = Clock::now();
  auto end = start + std::chrono::milliseconds(static_cast<int64_t>(o.seconds * 1000));
  for (int i = 0; i < o.viewers; ++i) {
    auto delay = std::chrono::milliseconds(1000LL * i / o.viewers);
    asio::co_spawn(io, Viewer(o, endpoint, totals, start, end, delay, false), asio::detached);
  }
  Totals probe_totals;  // the probe's own requests are not the viewers'
  if (!o.probe_host.empty()) {
    auto probe_endpoint = *resolver.resolve(o.probe_host, o.probe_port).begin();
    asio::co_spawn(
        io, Viewer(o, probe_endpoint, probe_totals, start, end, std::chrono::milliseconds(0), true),
        asio::detached);
  }
  io.run();
  // Delay over the probe per viewer part answer (parts the probe also fetched).
  std::vector<double> added;
  for (const auto& [name, at] : totals.viewer_part_ms) {
    if (auto it = probe_totals.probe_part_ms.find(name); it != probe_totals.probe_part_ms.end()) {
      added.push_back(at - it->second);
    }
  }
  std::sort(added.begin(), added.end());
  auto pct = [&](double q) {
    if (added.empty()) return 0.0;
    return added[std::min(added.size() - 1, static_cast<size_t>(q * added.size()))];
  };
  char added_json[160];
  std::snprintf(added_json, sizeof added_json,
                "{\"n\":%zu,\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f,\"probe_errors\":%llu}",
                added.size(), pct(0.5), pct(0.99), added.empty() ? 0.0 : added.back(),
                (unsigned long long)probe_totals.errors);
  std::string statuses;
  for (const auto& [code, n] : totals.statuses) {
    statuses +=
        (statuses.empty() ? "" : ",") + ("\"" + std::to_string(code) + "\":") + std::to_string(n);
  }
  std::string first_errors;
  for (const auto& e : totals.first_errors) {
    first_errors += (first_errors.empty() ? "\"" : ",\"") + e + "\"";
  }
  std::printf(
      "RESULT {\"viewers\":%d,\"requests\":%llu,\"ok\":%llu,\"errors\":%llu,\"statuses\":{%s},"
      "\"connect_errors\":%llu,\"bytes\":%llu,\"parts\":%llu,\"segments\":%llu,"
      "\"playlists\":%llu,\"first_errors\":[%s],\"added_ms\":%s}\n",
      o.viewers, (unsigned long long)totals.requests, (unsigned long long)totals.ok,
      (unsigned long long)totals.errors, statuses.c_str(),
      (unsigned long long)totals.connect_errors, (unsigned long long)totals.bytes,
      (unsigned long long)totals.parts, (unsigned long long)totals.segments,
      (unsigned long long)totals.playlists, first_errors.c_str(),
      o.probe_host.empty() ? "null" : added_json);
  return 0;
}
