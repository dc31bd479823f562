// The public face of a listener (server.h): start, reload TLS, stop. The listener itself is
// in listener.{h,cc}, a connection in session.h, the handler side in session_bridge.h.
#include "common/http/server.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "common/http/listener.h"
#include "common/http/tls.h"
#include "common/log/log.h"

namespace meshwork::http {

namespace asio = server_internal::asio;
namespace beast = server_internal::beast;
using tcp = server_internal::tcp;
using server_internal::WorkerSocket;

absl::StatusOr<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == listen.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", std::string(listen), "\" is not ADDR:PORT"));
  }
  std::string_view host = listen.substr(0, colon);
  std::string_view port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535 ||
      host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", std::string(listen), "\" is not ADDR:PORT"));
  }
  return std::make_pair(std::string(host), static_cast<uint16_t>(port));
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options, Router router) {
  auto host_port = SplitHostPort(options.listen);
  if (!host_port.ok()) return host_port.status();
  beast::error_code ec;
  auto address = asio::ip::make_address(host_port->first, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("listen address \"", options.listen, "\": ", ec.message()));
  }
  std::shared_ptr<asio::ssl::context> tls;
  if (!options.tls_cert_file.empty() || !options.tls_key_file.empty()) {
    if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "listener ", options.name, ": TLS needs both a certificate file and a key file"));
    }
    if (options.scheme != "https") {
      return absl::InvalidArgumentError(absl::StrCat(
          "listener ", options.name, ": a TLS listener has scheme https, not ", options.scheme));
    }
    auto loaded = LoadServerTlsContext(options.tls_cert_file, options.tls_key_file);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("listener ", options.name, ": ", loaded.status().message()));
    }
    tls = *std::move(loaded);
  }
  std::unique_ptr<Server> server(new Server());
  server->options_ = options;
  auto impl = std::make_shared<Impl>(std::move(options), std::move(router));
  if (tls) {
    impl->tls_enabled = true;
    absl::MutexLock lock(&impl->tls_mu);
    impl->tls = std::move(tls);
  }
  int threads = std::max(1, impl->options.threads);
  for (int i = 0; i < threads; ++i) {
    impl->workers.push_back(
        std::make_unique<Impl::Worker>(static_cast<size_t>(i), impl->clock->Monotonic()));
    impl->contexts.push_back(std::make_unique<asio::io_context>(1));
    impl->guards.push_back(asio::make_work_guard(*impl->contexts.back()));
  }
  // Each worker's socket service (and its epoll descriptors) is made now: made lazily, at
  // the first connection a worker takes, it could fail with EMFILE inside a handler.
  for (auto& ctx : impl->contexts) WorkerSocket warm(ctx->get_executor());
  impl->acceptor = std::make_unique<tcp::acceptor>(*impl->contexts[0]);
  impl->accept_backoff = std::make_unique<asio::steady_timer>(*impl->contexts[0]);
  for (auto& ctx : impl->contexts) {
    impl->wheel_timers.push_back(std::make_unique<asio::steady_timer>(*ctx));
  }
  tcp::endpoint endpoint(address, host_port->second);
  impl->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor->bind(endpoint, ec);
  if (!ec) impl->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", impl->options.listen, ": ", ec.message()));
  }
  auto bound = impl->acceptor->local_endpoint();
  server->port_ = bound.port();
  server->bound_ = bound.address().is_v6()
                       ? absl::StrCat("[", bound.address().to_string(), "]:", bound.port())
                       : absl::StrCat(bound.address().to_string(), ":", bound.port());
  impl->SetUpMetrics();
  impl->tally = std::make_shared<server_internal::RequestTally>(
      impl->requests, impl->latency, impl->bytes_in_counter, impl->bytes_out_counter,
      impl->options.name, impl->workers.size());
  if (impl->options.registry) metrics::AddCollectHook(*impl->options.registry, impl->tally);
  impl->Accept();
  for (size_t i = 0; i < impl->contexts.size(); ++i) impl->TickWheel(i);
  for (auto& ctx : impl->contexts) {
    impl->threads.emplace_back([c = ctx.get()] { c->run(); });
  }
  server->impl_ = std::move(impl);
  log::Info("http_listening", {{"listener", server->options_.name},
                               {"scheme", server->options_.scheme},
                               {"address", server->bound_}});
  return server;
}

absl::Status Server::ReloadTls() {
  if (!impl_ || !impl_->tls_enabled) {
    return absl::FailedPreconditionError(
        absl::StrCat("listener ", options_.name, " does not speak TLS"));
  }
  auto loaded = LoadServerTlsContext(options_.tls_cert_file, options_.tls_key_file);
  if (!loaded.ok()) {
    log::Warn("http_tls_reload_failed",
              {{"listener", options_.name}, {"error", loaded.status().message()}});
    return loaded.status();
  }
  {
    absl::MutexLock lock(&impl_->tls_mu);
    impl_->tls = *std::move(loaded);
  }
  log::Info("http_tls_reloaded",
            {{"listener", options_.name}, {"certificate", options_.tls_cert_file}});
  return absl::OkStatus();
}

ServerCounters Server::counters() const {
  ServerCounters c;
  if (impl_->tally) {
    c.bytes_in = impl_->tally->bytes_in();
    c.bytes_out = impl_->tally->bytes_out();
  }
  c.connections = impl_->connections.load(std::memory_order_relaxed);
  return c;
}

void Server::Stop(std::chrono::milliseconds grace) {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  Impl& impl = *impl_;
  asio::post(*impl.contexts[0], [&impl] {
    beast::error_code ec;
    impl.acceptor->close(ec);
    impl.accept_backoff->cancel();
  });
  impl.DrainSessions(grace);
  for (auto& g : impl.guards) g.reset();
  for (auto& c : impl.contexts) c->stop();
  for (auto& t : impl.threads) t.join();
  impl.threads.clear();
  log::Info("http_stopped", {{"listener", options_.name}});
}

Server::~Server() { Stop(std::chrono::milliseconds(0)); }

}  // namespace meshwork::http
