// udp:// MPEG-TS, unicast or multicast, on its own io_context thread.
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/multicast.hpp"
#include "boost/asio/ip/udp.hpp"
#include "boost/asio/steady_timer.hpp"
#include "common/log/log.h"
#include "streamer/ingest/source_base.h"
#include "streamer/ingest/sources.h"

namespace meshwork::ingest {
namespace {

namespace asio = boost::asio;
using udp = asio::ip::udp;
using Clock = std::chrono::steady_clock;

constexpr size_t kDatagramBufferBytes = 64 * 1024;  // the largest UDP payload
constexpr int kSocketReceiveBufferBytes = 4 * 1024 * 1024;
// A sender silent this long counts as lost (for logs; the socket keeps listening).
constexpr auto kIdleAfter = std::chrono::seconds(5);
constexpr auto kIdleCheckEvery = std::chrono::seconds(1);

std::string EndpointText(const udp::endpoint& endpoint) {
  if (endpoint.address().is_v6()) {
    return absl::StrCat("[", endpoint.address().to_string(), "]:", endpoint.port());
  }
  return absl::StrCat(endpoint.address().to_string(), ":", endpoint.port());
}

class UdpSource final : public SourceBase {
 public:
  UdpSource(std::string url, BytesCallback on_bytes)
      : SourceBase(std::move(url), "udp", std::move(on_bytes)) {}
  ~UdpSource() override { Stop(); }

  absl::Status Open(const SourceUrl& parsed) {
    const udp::endpoint local(asio::ip::make_address(parsed.host), parsed.port);
    boost::system::error_code ec;
    auto fail = [&](const char* step) {
      return absl::UnavailableError(absl::StrCat("input URL \"", log_url(), "\": cannot ", step,
                                                 " ", EndpointText(local), ": ", ec.message()));
    };
    socket_.open(local.protocol(), ec);
    if (ec) return fail("open a socket for");
    socket_.set_option(asio::socket_base::receive_buffer_size(kSocketReceiveBufferBytes), ec);
    ec.clear();  // best effort: the kernel may cap it (net.core.rmem_max)
    if (parsed.multicast) {
      socket_.set_option(asio::socket_base::reuse_address(true), ec);
      if (ec) return fail("set SO_REUSEADDR for");
    }
    // A multicast receiver binds to the group address itself, so that it gets only that
    // group's datagrams on Linux (not those of every group joined on the host).
    socket_.bind(local, ec);
    if (ec) return fail("bind");
    if (parsed.multicast) {
      if (!parsed.localaddr.empty()) {
        socket_.set_option(
            asio::ip::multicast::join_group(local.address().to_v4(),
                                            asio::ip::make_address_v4(parsed.localaddr)),
            ec);
      } else {
        socket_.set_option(asio::ip::multicast::join_group(local.address()), ec);
      }
      if (ec) return fail("join multicast group");
    }
    return absl::OkStatus();
  }

  void Start() {
    Receive();
    ScheduleIdleCheck();
    Launch();
  }

 private:
  void Run() override {
    auto guard = asio::make_work_guard(io_);
    io_.run();
  }

  void Interrupt() override { io_.stop(); }

  void Receive() {
    socket_.async_receive_from(
        asio::buffer(buffer_), sender_, [this](boost::system::error_code ec, size_t size) {
          if (ec == asio::error::operation_aborted || stopping()) return;
          if (ec) {
            // Unconnected UDP sockets rarely fail; don't spin if one does.
            log::Warn("ingest_receive_error", {{"url", log_url()}, {"error", ec.message()}});
            retry_timer_.expires_after(std::chrono::milliseconds(100));
            retry_timer_.async_wait([this](boost::system::error_code ec) {
              if (!ec) Receive();
            });
            return;
          }
          last_data_ = Clock::now();
          if (!active_) {
            active_ = true;
            log::Info("ingest_connected",
                      {{"url", log_url()}, {"kind", "udp"}, {"sender", EndpointText(sender_)}});
          }
          Deliver(std::span<const uint8_t>(buffer_.data(), size));
          Receive();
        });
  }

  void ScheduleIdleCheck() {
    idle_timer_.expires_after(kIdleCheckEvery);
    idle_timer_.async_wait([this](boost::system::error_code ec) {
      if (ec) return;
      if (active_ && Clock::now() - last_data_ >= kIdleAfter) {
        active_ = false;
        log::Warn("ingest_lost", {{"url", log_url()},
                                  {"kind", "udp"},
                                  {"reason", "no datagrams for 5s"},
                                  {"bytes", bytes_received()}});
      }
      ScheduleIdleCheck();
    });
  }

  // Declared first: the socket and timers must go before it.
  asio::io_context io_{1};
  udp::socket socket_{io_};
  asio::steady_timer idle_timer_{io_};
  asio::steady_timer retry_timer_{io_};
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(kDatagramBufferBytes);
  udp::endpoint sender_;
  // Worker thread only.
  bool active_ = false;
  Clock::time_point last_data_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> StartUdpSource(std::string url, const SourceUrl& parsed,
                                                       BytesCallback on_bytes) {
  auto source = std::make_unique<UdpSource>(std::move(url), std::move(on_bytes));
  if (absl::Status status = source->Open(parsed); !status.ok()) return status;
  source->Start();
  return source;
}

}  // namespace meshwork::ingest
