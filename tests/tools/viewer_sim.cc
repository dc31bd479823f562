// Simulated viewers for the all-hands test (P-16) and the relay benchmark (P-13).
//
//   viewer_sim --target HOST:PORT --path /STREAM/v1/index.ll.m3u8 --viewers N --seconds S
//              [--probe HOST:PORT] [--mix ll,ts,dash]
//
// --mix deals the viewers round-robin among the kinds named (default: ll only):
//   ll    LL-HLS as below;
//   ts    an HLS player on the MPEG-TS form (`index.m3u8` beside PATH): reloads the playlist
//         every target duration (half of it when nothing changed) and takes each new `.ts`
//         segment from the newest it first saw on;
//   dash  a DASH player on `/STREAM/index.mpd`: takes each representation's init once, then
//         each segment number of the last Period's SegmentTemplate as the wall clock says it
//         is complete (availabilityStartTime + Period start + duration), from the newest
//         complete one on, and reloads the MPD every minimumUpdatePeriod.
//
// Each viewer keeps one HTTP/1.1 connection and does what a low-latency player does: it
// reads the media playlist, then asks for it again blocking on the preload hint
// (`_HLS_msn=M&_HLS_part=P`), and fetches what it has not fetched yet from the live edge it
// first saw on: every part of the segment in progress, and every segment once complete. Viewers
// start spread over the first second. After S seconds it prints one line:
//
//   RESULT {"viewers":…,"requests":…,"ok":…,"errors":…,"statuses":{"404":…},
//           "connect_errors":…,"bytes":…,"parts":…,"segments":…,"playlists":…,
//           "kinds":{"ll":{"viewers":…,"errors":…,"bytes":…,"objects":…},…}}
//
// An error is any answer other than 200 or a broken connection. With --probe, one more viewer
// follows the same path on the probe address (the upstream itself), and the result adds the
// delay each viewer's part answers had over the probe's answer for the same part (time of the
// response header's arrival), in ms: "added_ms":{"n":…,"p50":…,"p99":…,"max":…,
// "first":{…},"front_probe":{…},"floor":{…},"stamp_fallbacks":…} (P-13), where "first" is over
// parts, of each part's earliest viewer, "front_probe" that of one more viewer of the front on
// a thread of its own, and "floor" that of a second lone viewer of the upstream.
// The viewers share one thread (asio coroutines), the probes have their own; loopback use only.
// The lone viewers (the reference, "front_probe" and "floor", a second lone viewer of the
// upstream) time a part by its socket's kernel receive stamp (SO_TIMESTAMPNS) of the data at
// the head of the queue — the answer's first bytes, unless the kernel merged a later segment
// into them (then later, never earlier) — not by when their thread got to read it: on a machine
// whose cores the servers and this process share, a thread's wake-up varied by ±8 ms. Parts
// timed by reading instead (no stamp came) are counted in "stamp_fallbacks". "added" and
// "first" compare the viewers' readings with the reference's reading.
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
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

#include "tests/tools/viewer_text.h"

namespace {

using namespace meshwork::viewer_sim;

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
  std::vector<std::string> mix = {"ll"};  // viewer i is of kind mix[i % size]
};

struct Totals {
  uint64_t requests = 0, ok = 0, errors = 0, connect_errors = 0, bytes = 0;
  uint64_t parts = 0, segments = 0, playlists = 0;
  std::map<int, uint64_t> statuses;       // non-200 answers
  std::vector<std::string> first_errors;  // "STATUS TARGET" of the first few
  // --probe: when each part's answer arrived (ms since the start): for the reference, by
  // its socket's receive stamp and by its thread's reading of the header (compared with the
  // lone viewers', and with the viewers', read the same ways); for the others, one of the two.
  std::map<std::string, double> probe_part_ms;
  std::map<std::string, double> probe_part_read_ms;
  std::vector<std::pair<std::string, double>> viewer_part_ms;
  uint64_t stamp_fallbacks = 0;  // lone viewers' parts timed by reading: no stamp came
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
    } else if (name == "--mix") {
      o.mix.clear();
      for (size_t at = 0; at <= value.size();) {
        size_t comma = std::min(value.find(',', at), value.size());
        std::string kind = value.substr(at, comma - at);
        if (kind != "ll" && kind != "ts" && kind != "dash") Usage("--mix takes ll, ts and dash");
        o.mix.push_back(kind);
        at = comma + 1;
      }
    } else {
      Usage("unknown option " + name);
    }
  }
  if (o.host.empty() || o.path.empty() || o.viewers <= 0 || o.seconds <= 0) Usage("bad options");
  return o;
}

// "/a/b/v1/index.ll.m3u8" → "/a/b/v1/"
std::string DirOf(const std::string& path) { return path.substr(0, path.rfind('/') + 1); }

// When the next answer's first byte reached `stream`'s socket, by the kernel's receive stamp
// (SO_TIMESTAMPNS, turned on by the caller; the stamp of the data at the head of the queue), on
// Clock's scale. The lone viewers use it: on this loaded machine their thread may run
// milliseconds after the byte came, which is not the server's delay. nullopt when nothing came
// within 10 s or the socket gives no stamp.
asio::awaitable<std::optional<Clock::time_point>> FirstByteArrival(beast::tcp_stream& stream) {
  using namespace asio::experimental::awaitable_operators;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(std::chrono::seconds(10));
  auto ready = co_await (stream.socket().async_wait(tcp::socket::wait_read, asio::use_awaitable) ||
                         timer.async_wait(asio::use_awaitable));
  if (ready.index() != 0) co_return std::nullopt;
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(stream.socket().native_handle(), &msg, MSG_PEEK | MSG_DONTWAIT) != 1) {
    co_return std::nullopt;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec stamp;
    std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
    timespec now_real;
    clock_gettime(CLOCK_REALTIME, &now_real);
    auto now = Clock::now();
    auto age = std::chrono::seconds(now_real.tv_sec - stamp.tv_sec) +
               std::chrono::nanoseconds(now_real.tv_nsec - stamp.tv_nsec);
    co_return now - std::chrono::duration_cast<Clock::duration>(age);
  }
  co_return std::nullopt;
}

// One GET on a kept connection; the body, or nullopt after an error (counted). When
// `header_at` is given it receives when this thread had read the answer's header; when
// `stamped_at` is given too, the socket's receive stamp of the answer's first bytes (nullopt
// when none came, or bytes were already buffered). A plain function, not a lambda: GCC 12
// mishandles temporaries around co_await in lambdas.
asio::awaitable<std::optional<std::string>> Get(
    beast::tcp_stream& stream, beast::flat_buffer& buffer, const std::string& host,
    const std::string& target, Totals& totals, Clock::time_point* header_at = nullptr,
    std::optional<Clock::time_point>* stamped_at = nullptr) {
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
    if (stamped_at) {
      stamped_at->reset();
      if (buffer.size() == 0) *stamped_at = co_await FirstByteArrival(stream);
    }
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

// LL-HLS: blocking reloads on the preload hint; parts of the segment in progress, each
// segment once complete.
asio::awaitable<void> LlViewer(const Options& o, beast::tcp_stream& stream,
                               beast::flat_buffer& buffer, Totals& totals, Clock::time_point start,
                               Clock::time_point end, const std::string& host, bool probe,
                               bool alone) {
  std::set<std::string> fetched;
  std::optional<std::string> hint_query;
  int64_t floor_msn = -1;  // objects before this msn are history, not fetched
  const std::string dir = DirOf(o.path);
  while (Clock::now() < end) {
    std::string target = o.path;
    if (hint_query) target += *hint_query;
    auto playlist = co_await Get(stream, buffer, host, target, totals);
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
      Clock::time_point read_at;
      std::optional<Clock::time_point> stamped_at;
      auto body = co_await Get(stream, buffer, host, object, totals, &read_at,
                               alone ? &stamped_at : nullptr);
      if (!body) break;
      if (is_part && !o.probe_host.empty()) {
        auto ms = [&](Clock::time_point t) {
          return std::chrono::duration<double, std::milli>(t - start).count();
        };
        if (alone && !stamped_at) ++totals.stamp_fallbacks;
        double at = ms(alone ? stamped_at.value_or(read_at) : read_at);
        if (probe) {
          totals.probe_part_ms[name] = at;
          totals.probe_part_read_ms[name] = ms(read_at);
        } else {
          totals.viewer_part_ms.emplace_back(name, at);
        }
      }
      ++(is_part ? totals.parts : totals.segments);
    }
    if (listing.hint.empty()) break;
    hint_query = listing.hint;
  }
}

// Waits `d`, but not past `end`.
asio::awaitable<void> Pause(Clock::duration d, Clock::time_point end) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_at(std::min(Clock::now() + d, end));
  co_await timer.async_wait(asio::use_awaitable);
}

// HLS on the MPEG-TS form: plain reloads, whole segments from the live edge on.
asio::awaitable<void> TsViewer(const Options& o, beast::tcp_stream& stream,
                               beast::flat_buffer& buffer, Totals& totals, Clock::time_point end) {
  const std::string dir = DirOf(o.path);
  const std::string path = dir + "index.m3u8";
  int64_t floor_msn = -1;
  std::set<int64_t> fetched;
  while (Clock::now() < end) {
    auto playlist = co_await Get(stream, buffer, o.host, path, totals);
    if (!playlist) co_return;
    ++totals.playlists;
    const double target_s = std::max(1.0, NumberAfter(*playlist, "#EXT-X-TARGETDURATION:"));
    std::vector<std::pair<int64_t, std::string>> segments;
    std::string_view text = *playlist;
    while (!text.empty()) {
      auto nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      if (line.empty() || line.front() == '#') continue;
      int64_t msn = 0;
      auto [end_digits, ec] = std::from_chars(line.data(), line.data() + line.size(), msn);
      if (ec == std::errc() && line.substr(end_digits - line.data()).starts_with(".ts")) {
        segments.emplace_back(msn, std::string(line));
      }
    }
    if (floor_msn < 0 && !segments.empty()) floor_msn = segments.back().first;
    bool fresh = false;
    for (const auto& [msn, uri] : segments) {
      if (msn < floor_msn || !fetched.insert(msn).second) continue;
      fresh = true;
      if (!co_await Get(stream, buffer, o.host, dir + uri, totals)) co_return;
      ++totals.segments;
    }
    co_await Pause(std::chrono::milliseconds(static_cast<int64_t>(target_s * (fresh ? 1000 : 500))),
                   end);
  }
}

// DASH: numbers of the SegmentTemplate by the wall clock, complete segments only.
asio::awaitable<void> DashViewer(const Options& o, beast::tcp_stream& stream,
                                 beast::flat_buffer& buffer, Totals& totals,
                                 Clock::time_point end) {
  // "/STREAM/v1/index.ll.m3u8" → "/STREAM/"
  const std::string base = DirOf(DirOf(o.path).substr(0, DirOf(o.path).size() - 1));
  std::set<std::string> inits;
  int64_t next_number = -1;
  while (Clock::now() < end) {
    auto mpd = co_await Get(stream, buffer, o.host, base + "index.mpd", totals);
    if (!mpd) co_return;
    ++totals.playlists;
    const std::string_view xml = *mpd;
    const size_t period = xml.rfind("<Period ");
    const int64_t ast = ParseDateTime(Attribute(xml, "availabilityStartTime"));
    const double period_start = ParseDuration(Attribute(xml, "start", period));
    const double update_s = std::max(0.5, ParseDuration(Attribute(xml, "minimumUpdatePeriod")));
    const size_t tmpl = xml.find("<SegmentTemplate ", period);
    const double timescale = std::atof(Attribute(xml, "timescale", tmpl).c_str());
    const double duration = std::atof(Attribute(xml, "duration", tmpl).c_str());
    const int64_t start_number = std::atoll(Attribute(xml, "startNumber", tmpl).c_str());
    std::vector<std::string> ids;
    for (size_t at = xml.find("<Representation ", period); at != std::string_view::npos;
         at = xml.find("<Representation ", at + 1)) {
      ids.push_back(Attribute(xml, "id", at));
    }
    const char* missing = period == std::string_view::npos ? "Period"
                          : ast < 0                        ? "availabilityStartTime"
                          : timescale <= 0                 ? "SegmentTemplate@timescale"
                          : duration <= 0                  ? "SegmentTemplate@duration"
                          : ids.empty()                    ? "Representation"
                                                           : nullptr;
    if (missing) {
      ++totals.errors;  // not an MPD this viewer can follow
      if (totals.first_errors.size() < 5) {
        std::string head(xml.substr(std::min(xml.size(), xml.find("availabilityStartTime")), 80));
        for (char& c : head)
          if (c == '"' || c == '\n' || c == '\\') c = '\'';
        totals.first_errors.push_back(std::string("mpd without ") + missing + head);
      }
      co_return;
    }
    const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    const double elapsed = (now_ms - ast) / 1000.0 - period_start;
    const int64_t complete =
        start_number + static_cast<int64_t>(elapsed * timescale / duration) - 1;
    if (next_number < 0 || next_number < start_number) next_number = complete;  // live edge
    for (const auto& id : ids) {
      if (!inits.insert(id).second) continue;
      if (!co_await Get(stream, buffer, o.host, base + id + "/init.mp4", totals)) co_return;
    }
    for (; next_number <= complete; ++next_number) {
      for (const auto& id : ids) {
        auto uri = base + id + "/" + std::to_string(next_number) + ".m4s";
        if (!co_await Get(stream, buffer, o.host, uri, totals)) co_return;
        ++totals.segments;
      }
    }
    co_await Pause(std::chrono::milliseconds(static_cast<int64_t>(update_s * 1000)), end);
  }
}

asio::awaitable<void> Viewer(const Options& o, std::string kind, tcp::endpoint endpoint,
                             Totals& totals, Clock::time_point start, Clock::time_point end,
                             std::chrono::milliseconds delay, const std::string& host, bool probe,
                             bool alone) {
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
  if (alone) {  // a lone probe: its parts' times are the kernel's receive stamps
    int on = 1;
    if (setsockopt(stream.socket().native_handle(), SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on)) {
      std::cerr << "viewer_sim: SO_TIMESTAMPNS refused; lone viewers timed by reading\n";
    }
  }
  beast::flat_buffer buffer;
  if (kind == "ts") {
    co_await TsViewer(o, stream, buffer, totals, end);
  } else if (kind == "dash") {
    co_await DashViewer(o, stream, buffer, totals, end);
  } else {
    co_await LlViewer(o, stream, buffer, totals, start, end, host, probe, alone);
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
  std::map<std::string, Totals> kinds;  // by kind of viewer
  std::map<std::string, int> kind_viewers;
  auto start = Clock::now();
  auto end = start + std::chrono::milliseconds(static_cast<int64_t>(o.seconds * 1000));
  for (int i = 0; i < o.viewers; ++i) {
    auto delay = std::chrono::milliseconds(1000LL * i / o.viewers);
    const std::string& kind = o.mix[i % o.mix.size()];
    ++kind_viewers[kind];
    asio::co_spawn(io,
                   Viewer(o, kind, endpoint, kinds[kind], start, end, delay, o.host, false, false),
                   asio::detached);
  }
  // The probe runs on a thread and an io_context of its own, so the viewers' work does not
  // delay its answers: its times are the reference.
  Totals probe_totals;  // the probe's own requests are not the viewers'
  asio::io_context probe_io;
  std::thread probe_thread;
  // One LL-HLS viewer of HOST:PORT on `context`, run by a thread of its own.
  auto spawn_alone = [&](asio::io_context& context, const std::string& host,
                         const std::string& port, Totals& t, bool probe) {
    tcp::resolver alone_resolver(context);
    auto alone_endpoint = *alone_resolver.resolve(host, port).begin();
    asio::co_spawn(context,
                   Viewer(o, "ll", alone_endpoint, t, start, end, std::chrono::milliseconds(0),
                          host, probe, true),
                   asio::detached);
    return std::thread([&context] { context.run(); });
  };
  if (!o.probe_host.empty()) {
    probe_thread = spawn_alone(probe_io, o.probe_host, o.probe_port, probe_totals, true);
  }
  // With the probe, one more viewer of the front on a thread of its own ("front_probe"): what
  // the front adds, without the time this process takes to get through the other viewers'
  // answers first (a front that releases a thousand held reloads at once sends this one
  // thread a thousand playlists to parse before the first part's answer is read).
  Totals front_totals;
  asio::io_context front_io;
  std::thread front_thread;
  // And a second lone viewer of the upstream itself ("floor"): its delay over the reference is
  // what this measurement cannot tell apart from zero on this machine.
  Totals twin_totals;
  asio::io_context twin_io;
  std::thread twin_thread;
  if (!o.probe_host.empty()) {
    front_thread = spawn_alone(front_io, o.host, o.port, front_totals, false);
    twin_thread = spawn_alone(twin_io, o.probe_host, o.probe_port, twin_totals, false);
  }
  io.run();
  for (auto* t : {&probe_thread, &front_thread, &twin_thread}) {
    if (t->joinable()) t->join();
  }
  Totals totals;
  std::string by_kind;
  for (auto& [kind, t] : kinds) {
    totals.requests += t.requests;
    totals.ok += t.ok;
    totals.errors += t.errors;
    totals.connect_errors += t.connect_errors;
    totals.bytes += t.bytes;
    totals.parts += t.parts;
    totals.segments += t.segments;
    totals.playlists += t.playlists;
    for (const auto& [code, n] : t.statuses) totals.statuses[code] += n;
    for (auto& e : t.first_errors) {
      if (totals.first_errors.size() < 5) totals.first_errors.push_back(kind + " " + e);
    }
    totals.viewer_part_ms.insert(totals.viewer_part_ms.end(), t.viewer_part_ms.begin(),
                                 t.viewer_part_ms.end());
    char one[192];
    std::snprintf(one, sizeof one,
                  "%s\"%s\":{\"viewers\":%d,\"errors\":%llu,\"bytes\":%llu,\"objects\":%llu}",
                  by_kind.empty() ? "" : ",", kind.c_str(), kind_viewers[kind],
                  (unsigned long long)t.errors, (unsigned long long)t.bytes,
                  (unsigned long long)(t.parts + t.segments));
    by_kind += one;
  }
  // Delay over the probe per viewer part answer (parts the probe also fetched), and per part
  // the delay of its first viewer: what the front adds before it serves anyone, apart from
  // the time it takes to serve all the viewers one after another.
  std::vector<double> added;
  std::map<std::string, double> first_by_part;
  for (const auto& [name, at] : totals.viewer_part_ms) {
    // Parts the probe had in its first 2 s are left out: viewers start over the first
    // second, so a late starter's first parts are late by its start, not by the front.
    // The viewers' times are their thread's readings: so is the reference's compared here.
    auto it = probe_totals.probe_part_read_ms.find(name);
    if (it == probe_totals.probe_part_read_ms.end() || it->second < 2000) continue;
    double d = at - it->second;
    added.push_back(d);
    auto [slot, fresh] = first_by_part.emplace(name, d);
    if (!fresh) slot->second = std::min(slot->second, d);
  }
  std::vector<double> first;
  for (const auto& [name, d] : first_by_part) first.push_back(d);
  // A lone viewer's part times over the reference's (parts past its first 2 s).
  auto over_reference = [&](const Totals& t) {
    std::vector<double> out;
    for (const auto& [name, at] : t.viewer_part_ms) {
      auto it = probe_totals.probe_part_ms.find(name);
      if (it != probe_totals.probe_part_ms.end() && it->second >= 2000) {
        out.push_back(at - it->second);
      }
    }
    return out;
  };
  std::vector<double> front = over_reference(front_totals);
  std::vector<double> floor = over_reference(twin_totals);
  std::string added_json =
      "{\"n\":" + std::to_string(added.size()) + "," + Percentiles(added) +
      ",\"probe_errors\":" + std::to_string(probe_totals.errors) +
      ",\"first\":{\"n\":" + std::to_string(first.size()) + "," + Percentiles(first) +
      "},\"front_probe\":{\"n\":" + std::to_string(front.size()) + "," + Percentiles(front) +
      ",\"errors\":" + std::to_string(front_totals.errors) +
      "},\"floor\":{\"n\":" + std::to_string(floor.size()) + "," + Percentiles(floor) +
      "},\"stamp_fallbacks\":" +
      std::to_string(probe_totals.stamp_fallbacks + front_totals.stamp_fallbacks +
                     twin_totals.stamp_fallbacks) +
      "}";
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
      "\"playlists\":%llu,\"first_errors\":[%s],\"added_ms\":%s,\"kinds\":{%s}}\n",
      o.viewers, (unsigned long long)totals.requests, (unsigned long long)totals.ok,
      (unsigned long long)totals.errors, statuses.c_str(),
      (unsigned long long)totals.connect_errors, (unsigned long long)totals.bytes,
      (unsigned long long)totals.parts, (unsigned long long)totals.segments,
      (unsigned long long)totals.playlists, first_errors.c_str(),
      o.probe_host.empty() ? "null" : added_json.c_str(), by_kind.c_str());
  return 0;
}
