#include "streamer/delivery/rtmp_listener.h"

#include <atomic>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio.hpp"
#include "boost/asio/ssl.hpp"
#include "common/crypto/primitives.h"
#include "common/http/server.h"
#include "common/http/tls.h"
#include "common/log/log.h"
#include "common/net/ip_address.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "streamer/rtmp/session.h"

namespace meshwork::streamer {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<tcp::socket>;

constexpr auto kDeadlineCheck = std::chrono::milliseconds(250);
constexpr size_t kReadBuffer = 64 * 1024;

void RandomFill(std::span<uint8_t> out) {
  const std::string bytes = crypto::RandomBytes(out.size());
  std::copy(bytes.begin(), bytes.end(), out.begin());
}

}  // namespace

class RtmpListener::Impl {
 public:
  struct Conn {
    virtual ~Conn() = default;
    virtual void Start() = 0;
    virtual void Close() = 0;
    // What per-client limits count by: an IPv4 address, an IPv6 address's /64 (a host
    // rotating addresses within its prefix is one client).
    virtual const std::string& client_key() const = 0;
    virtual bool publishing() const = 0;  // admitted to publish a stream
  };

  Impl(RtmpListenerOptions options, StreamManager* streams, const PublishAuth* auth)
      : options(std::move(options)),
        clock(this->options.clock ? this->options.clock : &RealClock::Get()),
        streams(streams),
        auth(auth),
        acceptor(io) {}

  RtmpListenerOptions options;
  const Clock* clock;
  StreamManager* streams;
  const PublishAuth* auth;
  asio::io_context io;
  tcp::acceptor acceptor;
  std::thread thread;
  std::atomic<bool> stopped{false};
  std::set<std::shared_ptr<Conn>> conns;  // io thread only
  absl::Mutex tls_mu;
  std::shared_ptr<asio::ssl::context> tls ABSL_GUARDED_BY(tls_mu);
  prometheus::Gauge* connections = nullptr;
  prometheus::Family<prometheus::Counter>* publishes = nullptr;
  prometheus::Counter* bytes_in = nullptr;

  bool secure() const { return !options.tls_cert_file.empty(); }
  void CountPublish(const std::string& result) {
    if (publishes) publishes->Add({{"listener", options.name}, {"result", result}}).Increment();
  }
  void Accept();
  void Remove(Conn* conn) {
    for (auto it = conns.begin(); it != conns.end(); ++it) {
      if (it->get() == conn) {
        conns.erase(it);
        break;
      }
    }
    if (connections) connections->Set(static_cast<double>(conns.size()));
  }
};

namespace {

template <class Stream>
tcp::socket& Socket(Stream& s) {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    return s.next_layer();
  } else {
    return s;
  }
}

// One client connection: reads feed the RTMP session, its answers are written back in
// order. Lives in Impl::conns until closed; everything runs on the io thread.
template <class Stream>
class Connection final : public RtmpListener::Impl::Conn,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(RtmpListener::Impl* impl, Stream stream)
      : impl_(impl), stream_(std::move(stream)), timer_(impl->io) {
    boost::system::error_code ec;
    auto peer = Socket(stream_).remote_endpoint(ec);
    address_ = ec ? "?" : peer.address().to_string();
    client_key_ = net::IpAddress::ClientKey(address_);
    client_ = ec ? "?" : absl::StrCat(address_, ":", peer.port());
    rtmp::ServerSession::Options options;
    options.app = impl->options.app;
    rtmp::ServerSession::Handler handler;
    handler.on_publish = [this](rtmp::PublishRequest& r) { return OnPublish(r); };
    handler.on_unpublish = [this] { OnUnpublish(); };
    handler.on_notice = [this](const std::string& text) {
      log::Warn("rtmp_notice", {{"listener", impl_->options.name},
                                {"client", client_},
                                {"stream", stream_name_},
                                {"notice", text}});
    };
    session_.emplace(options, std::move(handler), RandomFill,
                     static_cast<uint32_t>(impl_->clock->Monotonic().time_since_epoch().count()));
  }

  const std::string& client_key() const override { return client_key_; }
  bool publishing() const override { return session_ && session_->publishing(); }

  void Start() override {
    deadline_ = impl_->clock->Monotonic() + impl_->options.handshake_timeout;
    CheckDeadline();
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      stream_.async_handshake(asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::system::error_code ec) {
                                if (ec) return self->Fail(absl::StrCat("TLS: ", ec.message()));
                                self->Read();
                              });
    } else {
      Read();
    }
  }

  void Close() override {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    boost::system::error_code ec;
    Socket(stream_).close(ec);
    session_.reset();  // ends a publishing session (OnUnpublish)
    impl_->Remove(this);
  }

 private:
  absl::StatusOr<rtmp::FlvDepacketizer::Sink> OnPublish(rtmp::PublishRequest& r) {
    rtmp::SplitStreamKey(
        r.name,
        [this](std::string_view s) { return impl_->streams->Find(std::string(s)) != nullptr; },
        r.stream, r.token);
    stream_name_ = r.stream;
    auto refuse = [&](absl::Status status) {
      log::Warn("rtmp_publish_refused", {{"listener", impl_->options.name},
                                         {"client", client_},
                                         {"stream", r.stream},
                                         {"error", status.ToString()}});
      impl_->CountPublish(absl::IsUnauthenticated(status) ? "unauthorized" : "refused");
      return status;
    };
    auto pipeline = impl_->streams->Find(r.stream);
    if (!pipeline) {
      return refuse(absl::NotFoundError(
          absl::StrCat("stream \"", r.stream, "\" is not placed on this node")));
    }
    auto admitted = impl_->auth->CheckToken(r.token, r.stream, "");
    if (!admitted.ok()) return refuse(admitted.status());
    auto session = pipeline->BeginRtmp(*admitted);
    if (!session.ok()) return refuse(session.status());
    pipeline_ = pipeline;
    push_session_ = *session;
    impl_->CountPublish("started");
    log::Info("rtmp_publish_started", {{"listener", impl_->options.name},
                                       {"client", client_},
                                       {"stream", r.stream},
                                       {"took_over", *admitted}});
    rtmp::FlvDepacketizer::Sink sink;
    sink.on_track = [this](const media::TrackInfo& t) {
      if (!pipeline_->PushTrack(push_session_, t)) superseded_ = true;
    };
    sink.on_frame = [this](media::Frame&& f) {
      if (!pipeline_->PushFrame(push_session_, std::move(f))) superseded_ = true;
    };
    return sink;
  }

  void OnUnpublish() {
    if (!pipeline_) return;
    pipeline_->EndRtmp(push_session_);
    log::Info("rtmp_publish_ended",
              {{"listener", impl_->options.name}, {"client", client_}, {"stream", stream_name_}});
    pipeline_.reset();
  }

  void Read() {
    stream_.async_read_some(asio::buffer(buffer_),
                            [self = this->shared_from_this()](boost::system::error_code ec,
                                                              size_t n) { self->OnRead(ec, n); });
  }

  void OnRead(boost::system::error_code ec, size_t n) {
    if (closed_) return;
    if (ec) {
      if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) return Close();
      return Fail(ec.message());
    }
    if (impl_->bytes_in) impl_->bytes_in->Increment(static_cast<double>(n));
    std::string out;
    absl::Status status = session_->Feed(std::span(buffer_.data(), n), out);
    if (session_->publishing()) deadline_ = impl_->clock->Monotonic() + impl_->options.idle_timeout;
    Send(std::move(out));
    if (!status.ok()) return Fail(status.ToString());
    if (superseded_)
      return Fail("another publisher took over this stream, or its settings changed");
    if (!closing_) Read();
  }

  void Send(std::string bytes) {
    if (bytes.empty() || closed_) return;
    queued_ += bytes;
    if (queued_.size() > impl_->options.max_pending_write) {
      closing_ = true;
      log::Warn("rtmp_closed", {{"listener", impl_->options.name},
                                {"client", client_},
                                {"reason", "client does not read its answers"}});
      return Close();
    }
    Flush();
  }

  void Flush() {
    if (writing_ || closed_) return;
    if (queued_.empty()) {
      if (closing_) Close();
      return;
    }
    writing_ = true;
    in_flight_.swap(queued_);
    queued_.clear();
    asio::async_write(stream_, asio::buffer(in_flight_),
                      [self = this->shared_from_this()](boost::system::error_code ec, size_t) {
                        self->writing_ = false;
                        self->in_flight_.clear();
                        if (ec) return self->Close();
                        self->Flush();
                      });
  }

  // Ends the connection once what is queued (a refusal, say) has been written.
  void Fail(const std::string& reason) {
    if (closed_ || closing_) return;
    closing_ = true;
    log::Info("rtmp_closed", {{"listener", impl_->options.name},
                              {"client", client_},
                              {"stream", stream_name_},
                              {"reason", reason}});
    deadline_ = std::min(deadline_, impl_->clock->Monotonic() + std::chrono::seconds(2));
    Flush();
  }

  void CheckDeadline() {
    timer_.expires_after(kDeadlineCheck);
    timer_.async_wait([self = this->shared_from_this()](boost::system::error_code ec) {
      if (ec || self->closed_) return;
      if (self->impl_->clock->Monotonic() >= self->deadline_) {
        log::Info("rtmp_closed", {{"listener", self->impl_->options.name},
                                  {"client", self->client_},
                                  {"stream", self->stream_name_},
                                  {"reason", self->session_->publishing() ? "idle timeout"
                                                                          : "handshake timeout"}});
        return self->Close();
      }
      self->CheckDeadline();
    });
  }

  RtmpListener::Impl* impl_;
  Stream stream_;
  asio::steady_timer timer_;
  std::string address_;  // the client's IP address
  std::string client_key_;
  std::string client_;  // address:port, for logs
  std::string stream_name_;
  std::optional<rtmp::ServerSession> session_;
  std::shared_ptr<StreamPipeline> pipeline_;
  uint64_t push_session_ = 0;
  bool superseded_ = false;
  std::array<uint8_t, kReadBuffer> buffer_;
  std::string queued_;
  std::string in_flight_;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

void RtmpListener::Impl::Accept() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (stopped) return;
    if (ec) {
      // Out of descriptors and the like: try again shortly rather than spin.
      auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(100));
      timer->async_wait([this, timer](boost::system::error_code) { Accept(); });
      return;
    }
    boost::system::error_code peer_ec;
    const std::string address = socket.remote_endpoint(peer_ec).address().to_string();
    const std::string key = net::IpAddress::ClientKey(address);
    // connections that have not been admitted to publish yet, per client address: one
    // client cannot take every slot by connecting and saying nothing.
    size_t waiting = 0;
    for (const auto& c : conns) waiting += !c->publishing() && c->client_key() == key;
    const char* refusal = conns.size() >= options.max_connections ? "too many connections"
                          : waiting >= options.max_unpublished_per_address
                              ? "too many connections from this address that have not published"
                              : nullptr;
    if (refusal) {
      log::Warn("rtmp_refused",
                {{"listener", options.name}, {"client", address}, {"reason", refusal}});
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      std::shared_ptr<Conn> conn;
      if (secure()) {
        std::shared_ptr<asio::ssl::context> context;
        {
          absl::MutexLock lock(&tls_mu);
          context = tls;
        }
        conn =
            std::make_shared<Connection<TlsStream>>(this, TlsStream(std::move(socket), *context));
      } else {
        conn = std::make_shared<Connection<tcp::socket>>(this, std::move(socket));
      }
      conns.insert(conn);
      if (connections) connections->Set(static_cast<double>(conns.size()));
      conn->Start();
    }
    Accept();
  });
}

RtmpListener::RtmpListener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RtmpListener::~RtmpListener() { Stop(); }

absl::StatusOr<std::unique_ptr<RtmpListener>> RtmpListener::Start(RtmpListenerOptions options,
                                                                  StreamManager* streams,
                                                                  const PublishAuth* auth,
                                                                  prometheus::Registry* registry) {
  auto hp = http::SplitHostPort(options.listen);
  if (!hp.ok()) return hp.status();
  auto impl = std::make_unique<Impl>(std::move(options), streams, auth);
  if (impl->secure()) {
    auto context =
        http::LoadServerTlsContext(impl->options.tls_cert_file, impl->options.tls_key_file);
    if (!context.ok()) return context.status();
    absl::MutexLock lock(&impl->tls_mu);
    impl->tls = *context;
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(hp->first, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("--", impl->options.name, "-listen: \"",
                                                   hp->first, "\" is not an IP address"));
  }
  tcp::endpoint endpoint(address, hp->second);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", impl->options.listen, ": ", ec.message()));
  }
  if (registry) {
    const prometheus::Labels labels{{"listener", impl->options.name}};
    impl->connections = &prometheus::BuildGauge()
                             .Name("meshwork_rtmp_connections")
                             .Help("Open RTMP/RTMPS connections")
                             .Register(*registry)
                             .Add(labels);
    impl->publishes = &prometheus::BuildCounter()
                           .Name("meshwork_rtmp_publishes_total")
                           .Help("RTMP publish requests by result (started, refused, unauthorized)")
                           .Register(*registry);
    impl->bytes_in = &prometheus::BuildCounter()
                          .Name("meshwork_rtmp_received_bytes_total")
                          .Help("Bytes received on RTMP/RTMPS connections")
                          .Register(*registry)
                          .Add(labels);
  }
  Impl* raw = impl.get();
  raw->Accept();
  raw->thread = std::thread([raw] { raw->io.run(); });
  log::Info("rtmp_listening",
            {{"listener", raw->options.name},
             {"address", absl::StrCat(hp->first, ":", raw->acceptor.local_endpoint().port())},
             {"app", raw->options.app}});
  return std::unique_ptr<RtmpListener>(new RtmpListener(std::move(impl)));
}

void RtmpListener::Stop() {
  if (impl_->stopped.exchange(true)) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    boost::system::error_code ec;
    impl->acceptor.close(ec);
    auto conns = impl->conns;  // Close() removes from the set
    for (auto& c : conns) c->Close();
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

absl::Status RtmpListener::ReloadTls() {
  if (!impl_->secure()) return absl::OkStatus();
  auto context =
      http::LoadServerTlsContext(impl_->options.tls_cert_file, impl_->options.tls_key_file);
  if (!context.ok()) return context.status();
  absl::MutexLock lock(&impl_->tls_mu);
  impl_->tls = *context;
  return absl::OkStatus();
}

uint16_t RtmpListener::port() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

std::string RtmpListener::bound_address() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return absl::StrCat(ep.address().to_string(), ":", ep.port());
}

}  // namespace meshwork::streamer
