#include "central/rpc/grpc_gate.h"

#include <grpcpp/server_posix.h>
#include <sys/socket.h>

#include <map>
#include <thread>
#include <vector>

#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/local/stream_protocol.hpp"
#include "boost/asio/post.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/write.hpp"
#include "common/log/log.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"

namespace meshwork::central {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Local = asio::local::stream_protocol;

namespace {
class Relay;
}  // namespace

struct GrpcGate::Impl {
  Impl(GrpcGateOptions o, const Clock& c, prometheus::Registry* metrics)
      : options(std::move(o)), clock(c) {
    if (!metrics) return;
    connections = &prometheus::BuildGauge()
                       .Name("meshwork_grpc_gate_connections")
                       .Help("control-channel connections relayed to gRPC now (R-3)")
                       .Register(*metrics)
                       .Add({});
    refused = &prometheus::BuildCounter()
                   .Name("meshwork_grpc_gate_refused_total")
                   .Help("control-channel connections refused or cut by the gate, by rule (R-3)")
                   .Register(*metrics);
  }

  void Accept();
  void Admit(tcp::socket socket);
  void Refuse(const char* rule, const std::string& peer, const std::string& reason) {
    log::Warn("grpc_gate_refused", {{"peer", peer}, {"rule", rule}, {"reason", reason}});
    if (refused) refused->Add({{"rule", rule}}).Increment();
  }
  void Opened(const std::string& address) {
    ++per_address[address];
    ++total;
    if (connections) connections->Set(static_cast<double>(total));
  }
  void Closed(const std::string& address) {
    auto it = per_address.find(address);
    if (it != per_address.end() && --it->second == 0) per_address.erase(it);
    --total;
    if (connections) connections->Set(static_cast<double>(total));
  }

  const GrpcGateOptions options;
  const Clock& clock;
  prometheus::Gauge* connections = nullptr;
  prometheus::Family<prometheus::Counter>* refused = nullptr;
  grpc::Server* server = nullptr;
  // The io thread's only: connections per client address and in all, and the relays by the
  // descriptor gRPC has of their socket pair (what ServerContext::peer() names: "fd:N").
  std::map<std::string, size_t> per_address;
  size_t total = 0;
  std::map<int, std::weak_ptr<Relay>> by_grpc_fd;
  // Declared after what relays touch when destroyed: the io_context goes first.
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_backoff{io};
  std::thread thread;
};

namespace {

// One client connection and its socket pair to gRPC.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(GrpcGate::Impl* gate, tcp::socket client, Local::socket server, std::string address,
        std::string peer, int grpc_fd)
      : gate_(gate),
        client_(std::move(client)),
        server_(std::move(server)),
        timer_(client_.get_executor()),
        auth_timer_(client_.get_executor()),
        grpc_fd_(grpc_fd),
        address_(std::move(address)),
        peer_(std::move(peer)),
        check_(gate->options.limits),
        in_(gate->options.buffer_bytes),
        out_(gate->options.buffer_bytes) {
    gate_->Opened(address_);
  }
  ~Relay() {
    gate_->Closed(address_);
    // gRPC may have closed its end and a newer relay taken the descriptor's number.
    auto it = gate_->by_grpc_fd.find(grpc_fd_);
    if (it != gate_->by_grpc_fd.end() && it->second.expired()) gate_->by_grpc_fd.erase(it);
  }

  void Start() {
    gate_->by_grpc_fd[grpc_fd_] = weak_from_this();
    timer_.expires_after(gate_->options.handshake_timeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->check_.acknowledged() || self->failing_) return;
      self->Fail(kH2SettingsTimeout, "settings_timeout",
                 "the server's SETTINGS were not acknowledged in time");
    });
    if (gate_->options.auth_timeout.count() > 0) {
      auth_timer_.expires_after(gate_->options.auth_timeout);
      auth_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec || self->vouched_ || self->failing_) return;
        self->Fail(kH2NoError, "auth_timeout",
                   "no call with a valid cluster token within " +
                       std::to_string(self->gate_->options.auth_timeout.count()) + " ms");
      });
    }
    ReadClient();
    ReadServer();
  }

  // A call on this connection presented the cluster token (GrpcGate::Vouch).
  void Vouched() {
    vouched_ = true;
    auth_timer_.cancel();
  }

 private:
  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               gate_->clock.Monotonic().time_since_epoch())
        .count();
  }

  void ReadClient() {
    client_.async_read_some(
        asio::buffer(in_), [self = shared_from_this()](boost::system::error_code ec, size_t n) {
          if (ec) return self->CloseAll();
          size_t forward =
              self->check_.Feed(std::span<const uint8_t>(self->in_.data(), n), self->NowMs());
          if (forward == 0) return self->AfterClientBytes();
          asio::async_write(self->server_, asio::buffer(self->in_.data(), forward),
                            [self](boost::system::error_code ec, size_t) {
                              if (ec) return self->CloseAll();
                              self->AfterClientBytes();
                            });
        });
  }

  void AfterClientBytes() {
    if (check_.failed()) return Fail(check_.error_code(), check_.rule(), check_.reason());
    ReadClient();
  }

  void ReadServer() {
    server_.async_read_some(asio::buffer(out_),
                            [self = shared_from_this()](boost::system::error_code ec, size_t n) {
                              if (ec) {
                                if (!self->failing_)
                                  self->CloseAll();  // gRPC closed the connection
                                return;
                              }
                              self->boundary_.Feed(std::span<const uint8_t>(self->out_.data(), n));
                              self->writing_ = true;
                              asio::async_write(self->client_, asio::buffer(self->out_.data(), n),
                                                [self](boost::system::error_code ec, size_t) {
                                                  self->writing_ = false;
                                                  if (ec) return self->CloseAll();
                                                  if (self->failing_) return self->SendGoaway();
                                                  self->ReadServer();
                                                });
                            });
  }

  // Cuts gRPC off at once (it drops the connection's streams) and tells the client why,
  // between two of the server's frames.
  void Fail(uint32_t code, const char* rule, const std::string& reason) {
    if (failing_) return;
    failing_ = true;
    code_ = code;
    reason_ = reason;
    gate_->Refuse(rule, peer_, reason);
    boost::system::error_code ignored;
    server_.close(ignored);
    if (!writing_) SendGoaway();
  }

  void SendGoaway() {
    if (goaway_.size() > 0 || closed_) return;
    if (!boundary_.at_boundary()) return CloseAll();
    goaway_ = GoawayFrame(check_.last_stream_id(), code_, reason_);
    asio::async_write(client_, asio::buffer(goaway_),
                      [self = shared_from_this()](boost::system::error_code ec, size_t) {
                        if (ec) return self->CloseAll();
                        boost::system::error_code ignored;
                        self->client_.shutdown(tcp::socket::shutdown_send, ignored);
                        self->Drain();
                      });
  }

  // Reads and drops what the client still sends, for at most a second, so that its kernel
  // delivers the GOAWAY before a reset would discard it.
  void Drain() {
    timer_.cancel();
    timer_.expires_after(std::chrono::seconds(1));
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->CloseAll();
    });
    DrainRead();
  }
  void DrainRead() {
    client_.async_read_some(asio::buffer(in_),
                            [self = shared_from_this()](boost::system::error_code ec, size_t) {
                              if (ec) return self->CloseAll();
                              self->DrainRead();
                            });
  }

  void CloseAll() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    timer_.cancel();
    auth_timer_.cancel();
    client_.close(ignored);
    server_.close(ignored);
  }

  GrpcGate::Impl* const gate_;
  tcp::socket client_;
  Local::socket server_;
  asio::steady_timer timer_;
  asio::steady_timer auth_timer_;
  const int grpc_fd_;
  bool vouched_ = false;
  const std::string address_;
  const std::string peer_;
  ClientFrameCheck check_;
  FrameBoundary boundary_;
  std::vector<uint8_t> in_;
  std::vector<uint8_t> out_;
  bool writing_ = false;  // a server→client write is under way
  bool failing_ = false;
  bool closed_ = false;
  uint32_t code_ = 0;
  std::string reason_;
  std::string goaway_;
};

}  // namespace

void GrpcGate::Impl::Accept() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      // Out of descriptors or similar: try again shortly rather than spin.
      log::Warn("grpc_gate_accept_failed", {{"error", ec.message()}});
      accept_backoff.expires_after(std::chrono::milliseconds(100));
      accept_backoff.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void GrpcGate::Impl::Admit(tcp::socket socket) {
  boost::system::error_code ec;
  tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;
  const std::string address = remote.address().to_string();
  const std::string peer = address + ":" + std::to_string(remote.port());
  if (total >= options.max_connections) {
    return Refuse("connection_limit", peer,
                  "central already relays " + std::to_string(total) + " control connections");
  }
  auto it = per_address.find(address);
  if (it != per_address.end() && it->second >= options.max_per_address) {
    return Refuse("address_limit", peer,
                  "this address already has " + std::to_string(it->second) + " connections");
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    log::Warn("grpc_gate_socketpair_failed", {{"errno", errno}});
    return;
  }
  Local::socket to_grpc(io);
  to_grpc.assign(Local(), fds[1], ec);
  if (ec) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  grpc::AddInsecureChannelFromFd(server, fds[0]);  // gRPC owns fds[0] from here
  std::make_shared<Relay>(this, std::move(socket), std::move(to_grpc), address, peer, fds[0])
      ->Start();
}

GrpcGate::GrpcGate(GrpcGateOptions options, const Clock& clock, prometheus::Registry* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), clock, metrics)) {}

GrpcGate::~GrpcGate() { Stop(); }

void GrpcGate::Vouch(const std::string& peer) {
  if (!peer.starts_with("fd:")) return;
  int fd = -1;
  try {
    fd = std::stoi(peer.substr(3));
  } catch (const std::exception&) {
    return;
  }
  absl::MutexLock lock(&mu_);
  if (!impl_) return;
  asio::post(impl_->io, [impl = impl_.get(), fd] {
    auto it = impl->by_grpc_fd.find(fd);
    if (it == impl->by_grpc_fd.end()) return;
    if (auto relay = it->second.lock()) relay->Vouched();
  });
}

absl::StatusOr<int> GrpcGate::Start(grpc::Server* server) {
  absl::MutexLock lock(&mu_);
  impl_->server = server;
  const std::string& listen = impl_->options.listen;
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError("gRPC listen address must be host:port, not " + listen);
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty() || host == "0.0.0.0") host = "0.0.0.0";
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (ec) return absl::InvalidArgumentError("gRPC listen host is not an address: " + host);
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    return absl::InvalidArgumentError("gRPC listen port is not a number: " + listen);
  }
  if (port < 0 || port > 65535) return absl::InvalidArgumentError("gRPC port out of range");
  tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return absl::UnavailableError("cannot listen for gRPC on " + listen + ": " + ec.message());
  const int bound = acceptor.local_endpoint().port();
  impl_->Accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
  return bound;
}

void GrpcGate::Stop() {
  absl::MutexLock lock(&mu_);
  if (!impl_) return;
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // Destroying the io_context destroys the relays' pending handlers and with them the
  // relays: every client socket and every gRPC end of a socket pair closes here.
  impl_.reset();
}

}  // namespace meshwork::central
