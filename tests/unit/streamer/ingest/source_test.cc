// Ingest sources against real peers: ffmpeg as UDP sender and SRT caller/listener, and a
// small HTTP server in the test for the pull source.
#include "streamer/ingest/source.h"

#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "boost/asio.hpp"

namespace meshwork::ingest {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kTsPacket = 188;
constexpr const char* kFfmpeg = "timeout 30 ffmpeg -hide_banner -loglevel error -nostdin";
constexpr const char* kTestSource =
    "-re -f lavfi -i testsrc2=size=320x180:rate=25 -t 2 -c:v libx264 -g 50 -tune zerolatency";

// Gathers what a source delivers; waits are deadlines on a condition variable.
class Collector {
 public:
  BytesCallback Callback() {
    return [this](std::span<const uint8_t> bytes) {
      if (stop_returned_.load()) late_calls_.fetch_add(1);
      std::lock_guard<std::mutex> lock(mu_);
      data_.insert(data_.end(), bytes.begin(), bytes.end());
      ++chunks_;
      if (bytes.size() % kTsPacket != 0) ++odd_chunks_;
      cv_.notify_all();
    };
  }
  bool WaitForBytes(size_t at_least, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return data_.size() >= at_least; });
  }
  std::vector<uint8_t> Data() {
    std::lock_guard<std::mutex> lock(mu_);
    return data_;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return data_.size();
  }
  size_t odd_chunks() {
    std::lock_guard<std::mutex> lock(mu_);
    return odd_chunks_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    data_.clear();
    chunks_ = 0;
    odd_chunks_ = 0;
  }
  // Call right after Stop() returned: any callback from then on is counted as late.
  void MarkStopped() { stop_returned_.store(true); }
  int late_calls() const { return late_calls_.load(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> data_;
  size_t chunks_ = 0;
  size_t odd_chunks_ = 0;
  std::atomic<bool> stop_returned_{false};
  std::atomic<int> late_calls_{0};
};

// Stops `source`, checks it was prompt and that no callback follows.
void StopPromptly(Source& source, Collector& collector) {
  const auto started = Clock::now();
  source.Stop();
  const auto took = Clock::now() - started;
  collector.MarkStopped();
  CHECK(took < 1s);
  source.Stop();  // idempotent
  std::this_thread::sleep_for(300ms);
  CHECK(collector.late_calls() == 0);
}

// Whole 188-byte packets, each starting with the 0x47 sync byte.
void CheckTransportStream(const std::vector<uint8_t>& data, size_t min_packets) {
  REQUIRE(data.size() >= min_packets * kTsPacket);
  CHECK(data.size() % kTsPacket == 0);
  size_t unsynced = 0;
  for (size_t i = 0; i + kTsPacket <= data.size(); i += kTsPacket) {
    if (data[i] != 0x47) ++unsynced;
  }
  CHECK(unsynced == 0);
}

uint16_t FreeUdpPort() {
  asio::io_context io;
  asio::ip::udp::socket socket(io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return socket.local_endpoint().port();
}

uint16_t FreeTcpPort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io,
                                   asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return acceptor.local_endpoint().port();
}

int RunFfmpeg(const std::string& args) {
  const std::string command = std::string(kFfmpeg) + " " + args;
  INFO(command);
  return std::system(command.c_str());
}

// ffmpeg in the background (for when the test must act while it runs).
class BackgroundFfmpeg {
 public:
  explicit BackgroundFfmpeg(std::string args)
      : thread_([this, args = std::move(args)] {
          const std::string command = std::string(kFfmpeg) + " " + args;
          status_ = std::system(command.c_str());
        }) {}
  ~BackgroundFfmpeg() { Wait(); }
  int Wait() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  int status_ = -1;
  std::thread thread_;
};

// A 4 s H.264 MPEG-TS made once per run.
const std::vector<uint8_t>& FixtureTs() {
  static const std::vector<uint8_t> bytes = [] {
    std::string dir_template =
        (std::filesystem::temp_directory_path() / "meshwork-ingest-XXXXXX").string();
    REQUIRE(mkdtemp(dir_template.data()) != nullptr);
    const std::filesystem::path dir(dir_template);
    const std::filesystem::path file = dir / "fixture.ts";
    REQUIRE(RunFfmpeg("-f lavfi -i testsrc2=size=320x180:rate=25 -t 4 -c:v libx264 -g 50 "
                      "-preset ultrafast -f mpegts -y " +
                      file.string()) == 0);
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> out((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    std::filesystem::remove_all(dir);
    return out;
  }();
  return bytes;
}

// A tiny HTTP/1.1 server of a "live" TS: each connection gets the first `per_connection`
// bytes of `payload`, then the server closes it.
class TsServer {
 public:
  // kEndlessChunkLine: a chunked body whose first chunk-size line never ends (bytes without a
  // CRLF, 64 KiB every 10 ms, up to 32 MiB).
  enum class Mode { kChunked, kCloseDelimited, kNotFound, kStall, kEndlessChunkLine };

  TsServer(std::vector<uint8_t> payload, size_t per_connection, Mode mode)
      : payload_(std::move(payload)), per_connection_(per_connection), mode_(mode) {
    acceptor_.open(asio::ip::tcp::v4());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    Accept();
    io_thread_ = std::thread([this] { io_.run(); });
  }
  ~TsServer() {
    io_.stop();
    io_thread_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& socket : sockets_) {
        boost::system::error_code ignored;
        socket->shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      }
    }
    for (auto& t : handlers_) t.join();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/live/cam.ts"; }
  void set_mode(Mode mode) { mode_.store(mode); }
  bool WaitForConnections(int at_least, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return connections_ >= at_least; });
  }
  int connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return connections_;
  }
  std::string first_request() {
    std::lock_guard<std::mutex> lock(mu_);
    return first_request_;
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;
      auto shared = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
      std::lock_guard<std::mutex> lock(mu_);
      sockets_.push_back(shared);
      handlers_.emplace_back([this, shared] { Serve(*shared); });
      Accept();
    });
  }

  void Serve(asio::ip::tcp::socket& socket) {
    boost::system::error_code ec;
    asio::streambuf request;
    asio::read_until(socket, request, "\r\n\r\n", ec);
    if (ec) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (connections_ == 0) {
        first_request_.assign(asio::buffers_begin(request.data()),
                              asio::buffers_end(request.data()));
      }
      ++connections_;
      cv_.notify_all();
    }
    const Mode mode = mode_.load();
    const size_t chunk = 7 * kTsPacket;
    const size_t total = std::min(per_connection_, payload_.size());
    if (mode == Mode::kEndlessChunkLine) {
      asio::write(socket,
                  asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\n"
                                           "Transfer-Encoding: chunked\r\n\r\n1;")),
                  ec);
      const std::string junk(64 * 1024, 'a');
      for (int i = 0; i < 512 && !ec; ++i) {
        asio::write(socket, asio::buffer(junk), ec);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a paced upstream
      }
    } else if (mode == Mode::kNotFound) {
      asio::write(socket,
                  asio::buffer(std::string("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n"
                                           "Connection: close\r\n\r\nnot found")),
                  ec);
    } else if (mode == Mode::kCloseDelimited) {
      asio::write(socket,
                  asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\n"
                                           "Connection: close\r\n\r\n")),
                  ec);
      for (size_t at = 0; at < total && !ec; at += chunk) {
        asio::write(socket, asio::buffer(payload_.data() + at, std::min(chunk, total - at)), ec);
      }
    } else {
      asio::write(socket,
                  asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\n"
                                           "Transfer-Encoding: chunked\r\n\r\n")),
                  ec);
      const size_t limit = mode == Mode::kStall ? std::min<size_t>(total, 10 * chunk) : total;
      for (size_t at = 0; at < limit && !ec; at += chunk) {
        const size_t n = std::min(chunk, limit - at);
        char size_line[32];
        std::snprintf(size_line, sizeof size_line, "%zx\r\n", n);
        asio::write(socket, asio::buffer(std::string(size_line)), ec);
        if (!ec) asio::write(socket, asio::buffer(payload_.data() + at, n), ec);
        if (!ec) asio::write(socket, asio::buffer(std::string("\r\n")), ec);
      }
      if (mode == Mode::kStall) {
        // Keep the connection open without sending until the client gives up on it.
        char byte;
        socket.read_some(asio::buffer(&byte, 1), ec);
      }
      // A live stream that ends abruptly: no terminating zero-length chunk.
    }
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  }

  const std::vector<uint8_t> payload_;
  const size_t per_connection_;
  std::atomic<Mode> mode_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_{io_};
  std::thread io_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int connections_ = 0;
  std::string first_request_;
  std::vector<std::shared_ptr<asio::ip::tcp::socket>> sockets_;
  std::vector<std::thread> handlers_;
};

std::unique_ptr<Source> Start(const std::string& url, Collector& collector) {
  auto source = StartSource(url, collector.Callback());
  INFO(url);
  REQUIRE(source.ok());
  REQUIRE((*source)->url() == url);
  return std::move(*source);
}

TEST_CASE("S-1 UDP unicast receives MPEG-TS from ffmpeg", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  Collector collector;
  auto source = Start("udp://127.0.0.1:" + std::to_string(port), collector);

  REQUIRE(RunFfmpeg(std::string(kTestSource) + " -f mpegts 'udp://127.0.0.1:" +
                    std::to_string(port) + "?pkt_size=1316'") == 0);
  REQUIRE(collector.WaitForBytes(200 * kTsPacket, 5s));
  StopPromptly(*source, collector);

  const std::vector<uint8_t> data = collector.Data();
  CheckTransportStream(data, 200);
  CHECK(collector.odd_chunks() == 0);
  CHECK(source->bytes_received() == data.size());
}

TEST_CASE("S-1 UDP accepts datagrams of any size", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  Collector collector;
  auto source = Start("udp://127.0.0.1:" + std::to_string(port), collector);

  asio::io_context io;
  asio::ip::udp::socket sender(io, asio::ip::udp::v4());
  const asio::ip::udp::endpoint to(asio::ip::make_address("127.0.0.1"), port);
  const std::vector<size_t> sizes = {188, 1316, 1500 - 28, 7 * 188 * 4, 60000, 1};
  size_t total = 0;
  for (size_t size : sizes) {
    sender.send_to(asio::buffer(std::vector<uint8_t>(size, 0x47)), to);
    total += size;
  }
  REQUIRE(collector.WaitForBytes(total, 5s));
  CHECK(collector.size() == total);
  StopPromptly(*source, collector);
}

// Sends one 188-byte null packet to `group` on the loopback interface.
void SendMulticastProbe(const std::string& group, uint16_t port) {
  asio::io_context io;
  asio::ip::udp::socket sender(io, asio::ip::udp::v4());
  boost::system::error_code ec;
  sender.set_option(asio::ip::multicast::outbound_interface(asio::ip::make_address_v4("127.0.0.1")),
                    ec);
  sender.set_option(asio::ip::multicast::enable_loopback(true), ec);
  sender.set_option(asio::ip::multicast::hops(0), ec);
  std::vector<uint8_t> null_packet(kTsPacket, 0xff);
  null_packet[0] = 0x47;
  null_packet[1] = 0x1f;
  null_packet[2] = 0xff;
  null_packet[3] = 0x10;
  sender.send_to(asio::buffer(null_packet),
                 asio::ip::udp::endpoint(asio::ip::make_address(group), port), 0, ec);
}

TEST_CASE("S-1 UDP multicast receives MPEG-TS from ffmpeg", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  const std::string group = "239.255.77.1";
  const std::string url = "udp://" + group + ":" + std::to_string(port) + "?localaddr=127.0.0.1";
  Collector collector;
  auto started = StartSource(url, collector.Callback());
  INFO("joining " << group << " on 127.0.0.1: " << started.status());
  REQUIRE(started.ok());
  std::unique_ptr<Source> source = std::move(*started);

  // Is multicast routable over the loopback interface in this sandbox?
  for (int i = 0; i < 5 && collector.size() == 0; ++i) {
    SendMulticastProbe(group, port);
    collector.WaitForBytes(1, 200ms);
  }
  if (collector.size() == 0) StopPromptly(*source, collector);
  INFO("multicast to " << group << " over the loopback interface must be delivered");
  REQUIRE(collector.size() > 0);
  collector.Clear();

  REQUIRE(RunFfmpeg(std::string(kTestSource) + " -f mpegts 'udp://" + group + ":" +
                    std::to_string(port) + "?pkt_size=1316&localaddr=127.0.0.1&ttl=0'") == 0);
  REQUIRE(collector.WaitForBytes(200 * kTsPacket, 5s));
  StopPromptly(*source, collector);
  CheckTransportStream(collector.Data(), 200);
}

TEST_CASE("S-1 SRT listener receives from an ffmpeg caller", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  const std::string passphrase = "meshwork-secret-1";
  Collector collector;
  auto source = Start("srt://127.0.0.1:" + std::to_string(port) +
                          "?mode=listener&latency=120&streamid=cam1&passphrase=" + passphrase,
                      collector);
  const std::string caller = " -f mpegts 'srt://127.0.0.1:" + std::to_string(port) +
                             "?mode=caller&streamid=cam1&pbkeylen=16&passphrase=" + passphrase +
                             "'";

  REQUIRE(RunFfmpeg(std::string(kTestSource) + caller) == 0);
  REQUIRE(collector.WaitForBytes(200 * kTsPacket, 5s));
  const size_t first = collector.size();
  CheckTransportStream(collector.Data(), 200);

  // The caller went away; the listener takes the next one.
  REQUIRE(RunFfmpeg(std::string(kTestSource) + caller) == 0);
  REQUIRE(collector.WaitForBytes(first + 200 * kTsPacket, 5s));
  StopPromptly(*source, collector);
  CheckTransportStream(collector.Data(), 400);
  CHECK(source->bytes_received() == collector.size());
}

TEST_CASE("S-1 SRT listener turns away a caller with another streamid", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  Collector collector;
  auto source =
      Start("srt://127.0.0.1:" + std::to_string(port) + "?mode=listener&streamid=cam1", collector);
  RunFfmpeg(
      "-f lavfi -i testsrc2=size=320x180:rate=25 -t 1 -c:v libx264 -f mpegts "
      "'srt://127.0.0.1:" +
      std::to_string(port) + "?mode=caller&streamid=cam2' 2>/dev/null");
  CHECK_FALSE(collector.WaitForBytes(1, 300ms));
  StopPromptly(*source, collector);
}

TEST_CASE("S-1 SRT caller pulls from an ffmpeg listener", "[ingest]") {
  const uint16_t port = FreeUdpPort();
  const std::string passphrase = "another-secret-2";
  // ffmpeg listens first (it waits for us before sending), 3 s of stream.
  BackgroundFfmpeg ffmpeg(
      "-re -f lavfi -i testsrc2=size=320x180:rate=25 -t 3 -c:v libx264 -g 50 -tune zerolatency "
      "-f mpegts "
      "'srt://127.0.0.1:" +
      std::to_string(port) + "?mode=listener&pbkeylen=16&passphrase=" + passphrase +
      "' 2>/dev/null");  // it reports the disconnect when we stop first
  Collector collector;
  // Started at once: the first attempts find no listener and must be retried.
  auto source = Start("srt://127.0.0.1:" + std::to_string(port) +
                          "?mode=caller&latency=120&streamid=pull1&passphrase=" + passphrase,
                      collector);
  REQUIRE(collector.WaitForBytes(300 * kTsPacket, 15s));
  StopPromptly(*source, collector);
  CheckTransportStream(collector.Data(), 300);
  ffmpeg.Wait();
}

TEST_CASE("S-1 HTTP pull reconnects", "[ingest]") {
  const std::vector<uint8_t>& fixture = FixtureTs();
  const size_t per_connection = 40 * 7 * kTsPacket;
  REQUIRE(fixture.size() >= per_connection);
  const std::vector<uint8_t> expected(fixture.begin(), fixture.begin() + per_connection);

  auto run = [&](TsServer::Mode mode) {
    TsServer server(fixture, per_connection, mode);
    Collector collector;
    auto source = Start(server.url(), collector);
    REQUIRE(collector.WaitForBytes(2 * per_connection, 10s));
    REQUIRE(server.connections() >= 2);
    StopPromptly(*source, collector);

    const std::vector<uint8_t> data = collector.Data();
    CHECK(std::vector<uint8_t>(data.begin(), data.begin() + per_connection) == expected);
    CHECK(std::vector<uint8_t>(data.begin() + per_connection, data.begin() + 2 * per_connection) ==
          expected);
    CheckTransportStream(data, 2 * per_connection / kTsPacket);
    CHECK_THAT(server.first_request(), Catch::StartsWith("GET /live/cam.ts HTTP/1.1\r\n"));
    CHECK_THAT(server.first_request(),
               Catch::Contains("Host: 127.0.0.1:" + std::to_string(server.port())));
  };
  SECTION("chunked body cut off") { run(TsServer::Mode::kChunked); }
  SECTION("close-delimited body") { run(TsServer::Mode::kCloseDelimited); }
}

TEST_CASE("R-3 HTTP pull: a chunk-size line that never ends is dropped, not buffered", "[ingest]") {
  TsServer server(FixtureTs(), 0, TsServer::Mode::kEndlessChunkLine);
  Collector collector;
  auto source = Start(server.url(), collector);
  // The client gives up on the line once its bounded buffer is full (~256 KiB, well under a
  // second here) and connects again; buffering it whole it would keep reading for its 5 s
  // read deadline.
  CHECK(server.WaitForConnections(2, 2s));
  StopPromptly(*source, collector);
  CHECK(collector.size() == 0);
}

TEST_CASE("S-1 HTTP pull keeps retrying a 404 until the stream appears", "[ingest]") {
  const std::vector<uint8_t>& fixture = FixtureTs();
  const size_t per_connection = 20 * 7 * kTsPacket;
  TsServer server(fixture, per_connection, TsServer::Mode::kNotFound);
  Collector collector;
  auto source = Start(server.url(), collector);
  REQUIRE(server.WaitForConnections(3, 5s));
  CHECK(collector.size() == 0);

  server.set_mode(TsServer::Mode::kChunked);
  REQUIRE(collector.WaitForBytes(per_connection, 10s));
  StopPromptly(*source, collector);
  CheckTransportStream(collector.Data(), per_connection / kTsPacket);
}

TEST_CASE("S-1 HTTP pull reconnects after 5 s without data", "[ingest]") {
  const std::vector<uint8_t>& fixture = FixtureTs();
  TsServer server(fixture, fixture.size(), TsServer::Mode::kStall);
  Collector collector;
  auto source = Start(server.url(), collector);
  REQUIRE(collector.WaitForBytes(10 * 7 * kTsPacket, 5s));
  const auto stalled = Clock::now();
  REQUIRE(server.WaitForConnections(2, 10s));
  CHECK(Clock::now() - stalled >= 4s);
  StopPromptly(*source, collector);
}

TEST_CASE("S-1 Stop returns promptly for every kind of source", "[ingest]") {
  Collector collector;
  SECTION("udp while datagrams arrive") {
    const uint16_t port = FreeUdpPort();
    auto source = Start("udp://127.0.0.1:" + std::to_string(port), collector);
    std::atomic<bool> sending{true};
    std::thread sender([&] {
      asio::io_context io;
      asio::ip::udp::socket socket(io, asio::ip::udp::v4());
      const asio::ip::udp::endpoint to(asio::ip::make_address("127.0.0.1"), port);
      std::vector<uint8_t> datagram(1316, 0x47);
      while (sending.load()) {
        boost::system::error_code ec;
        socket.send_to(asio::buffer(datagram), to, 0, ec);
        std::this_thread::sleep_for(1ms);
      }
    });
    REQUIRE(collector.WaitForBytes(10 * 1316, 5s));
    StopPromptly(*source, collector);
    sending.store(false);
    sender.join();
  }
  SECTION("srt listener without a caller") {
    auto source =
        Start("srt://127.0.0.1:" + std::to_string(FreeUdpPort()) + "?mode=listener", collector);
    std::this_thread::sleep_for(300ms);
    StopPromptly(*source, collector);
  }
  SECTION("srt caller while connecting to nobody") {
    auto source =
        Start("srt://127.0.0.1:" + std::to_string(FreeUdpPort()) + "?mode=caller", collector);
    std::this_thread::sleep_for(700ms);
    StopPromptly(*source, collector);
  }
  SECTION("http while the server refuses connections") {
    auto source =
        Start("http://127.0.0.1:" + std::to_string(FreeTcpPort()) + "/live.ts", collector);
    std::this_thread::sleep_for(500ms);
    StopPromptly(*source, collector);
  }
  SECTION("http while waiting for body bytes") {
    TsServer server(FixtureTs(), FixtureTs().size(), TsServer::Mode::kStall);
    auto source = Start(server.url(), collector);
    REQUIRE(collector.WaitForBytes(7 * kTsPacket, 5s));
    StopPromptly(*source, collector);
  }
  SECTION("destroying without Stop") {
    auto source =
        Start("srt://127.0.0.1:" + std::to_string(FreeUdpPort()) + "?mode=caller", collector);
    const auto started = Clock::now();
    source.reset();
    CHECK(Clock::now() - started < 1s);
  }
}

TEST_CASE("S-1 a listening port in use fails with Unavailable", "[ingest]") {
  asio::io_context io;
  asio::ip::udp::socket taken(io, asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::string port = std::to_string(taken.local_endpoint().port());
  for (const std::string& url :
       {"udp://127.0.0.1:" + port, "srt://127.0.0.1:" + port + "?mode=listener"}) {
    INFO(url);
    auto source = StartSource(url, [](std::span<const uint8_t>) {});
    REQUIRE_FALSE(source.ok());
    CHECK(source.status().code() == absl::StatusCode::kUnavailable);
    CHECK_THAT(std::string(source.status().message()), Catch::Contains(url));
  }
}

}  // namespace
}  // namespace meshwork::ingest
