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
// response header's arrival), in ms: "added_ms":{"n":…,"p50":…,"p99":…,"max":…,
// "first":{…}} (P-13), where "first" is over parts, of each part's earliest viewer.
// The viewers share one thread (asio coroutines), the probe has its own; loopback use only.
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
#include <set>
#include <string>
#include <string_view>
#include <thread>
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
// "\"p50\":…,\"p99\":…,\"max\":…" of `v` (sorted here), in ms.
std::string Percentiles(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
  };
  char out[96];
  std::snprintf(out, sizeof out, "\"p50\":%.2f,\"p99\":%.2f,\"max\":%.2f", at(0.5), at(0.99),
                v.empty() ? 0.0 : v.back());
  return out;
}

// What a viewer takes from a media playlist. Plain scanning, not std::regex: with a thousand
// viewers in one thread, parsing time would show up as delay in the measurements.
struct Listing {
  // Listed parts (#EXT-X-PART, "M.P.m4s") in order, then segments ("M.m4s"). Not the
  // preload hint: a hinted part may never exist (the segment ends first), and this viewer
  // only takes what is listed.
  std::vector<std::pair<std::string, bool>> objects;  // name, is_part
  int64_t newest_segment = -1;
  std::string hint;  // "?_HLS_msn=M&_HLS_part=P" of the preload hint; empty when none
};

// "123.4.m4s" → true with msn and part (-1 for "123.m4s"); false for anything else. A query
// ("?v=2", L-14) is not part of the name; the viewer requests the URI as listed, query included.
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

// The URI="…" attribute of a tag line; empty when absent.
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
  const std::string dir = DirOf(o.path);
  while (Clock::now() < end) {
    std::string target = o.path;
    if (hint_query) target += *hint_query;
    auto playlist = co_await Get(stream, buffer, probe ? o.probe_host : o.host, target, totals);
    if (!playlist) break;
    ++totals.playlists;
    Listing listing = ParseListing(*playlist);
    auto& listed = listing.objects;
    int64_t newest_segment = listing.newest_segment;
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
    if (listing.hint.empty()) break;
    hint_query = listing.hint;
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
  // The probe runs on a thread and an io_context of its own, so the viewers' work does not
  // delay its answers: its times are the reference.
  Totals probe_totals;  // the probe's own requests are not the viewers'
  asio::io_context probe_io;
  std::thread probe_thread;
  if (!o.probe_host.empty()) {
    tcp::resolver probe_resolver(probe_io);
    auto probe_endpoint = *probe_resolver.resolve(o.probe_host, o.probe_port).begin();
    asio::co_spawn(
        probe_io,
        Viewer(o, probe_endpoint, probe_totals, start, end, std::chrono::milliseconds(0), true),
        asio::detached);
    probe_thread = std::thread([&probe_io] { probe_io.run(); });
  }
  io.run();
  if (probe_thread.joinable()) probe_thread.join();
  // Delay over the probe per viewer part answer (parts the probe also fetched), and per part
  // the delay of its first viewer: what the front adds before it serves anyone, apart from
  // the time it takes to serve all the viewers one after another.
  std::vector<double> added;
  std::map<std::string, double> first_by_part;
  for (const auto& [name, at] : totals.viewer_part_ms) {
    // Parts the probe had in its first 2 s are left out: viewers start over the first
    // second, so a late starter's first parts are late by its start, not by the front.
    auto it = probe_totals.probe_part_ms.find(name);
    if (it == probe_totals.probe_part_ms.end() || it->second < 2000) continue;
    double d = at - it->second;
    added.push_back(d);
    auto [slot, fresh] = first_by_part.emplace(name, d);
    if (!fresh) slot->second = std::min(slot->second, d);
  }
  std::vector<double> first;
  for (const auto& [name, d] : first_by_part) first.push_back(d);
  std::string added_json = "{\"n\":" + std::to_string(added.size()) + "," + Percentiles(added) +
                           ",\"probe_errors\":" + std::to_string(probe_totals.errors) +
                           ",\"first\":{\"n\":" + std::to_string(first.size()) + "," +
                           Percentiles(first) + "}}";
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
      o.probe_host.empty() ? "null" : added_json.c_str());
  return 0;
}
