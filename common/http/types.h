// The request/response types every Meshwork HTTP handler sees.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "boost/beast/http.hpp"
#include "common/net/ip_address.h"

namespace meshwork::http {

namespace beast_http = boost::beast::http;
using Request = beast_http::request<beast_http::string_body>;
using Response = beast_http::response<beast_http::string_body>;
using Status = beast_http::status;
using Verb = beast_http::verb;

// What a handler knows about the request besides its bytes. Owned by the connection; valid
// until the handler's Responder has been used.
struct RequestContext {
  Request request;
  std::string_view path;   // the target without the query, percent-encoding kept
  std::string_view query;  // without the '?'
  std::vector<std::string> params;  // captured {name} segments of the matched route, in order
  net::IpAddress peer;              // the socket peer
  net::IpAddress client;            // per T-2: the peer, or the last X-Forwarded-For element
  bool peer_trusted = false;        // the peer is inside the cluster's trusted proxies
  std::string listener;             // listener name ("http", "publish", ...)
  std::string scheme;               // the listener's own scheme ("http" or "https")
  uint16_t local_port = 0;

  // The scheme the viewer used: the listener's, or `https` when a trusted peer says so with
  // X-Forwarded-Proto (T-6, O-13).
  std::string ViewerScheme() const;
  // Value of query parameter `name` (not decoded beyond '+'/'%XX'); empty optional if absent.
  std::optional<std::string> QueryParam(std::string_view name) const;
};

// Completes one request. Move-only; Send() may be called once from any thread: the
// response is posted to the connection's own worker. A Responder dropped without Send()
// answers 500, so a forgotten path never hangs a client.
class Responder {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void Complete(Response response) = 0;
  };
  explicit Responder(std::shared_ptr<Sink> sink) : sink_(std::move(sink)) {}
  Responder(Responder&&) = default;
  Responder& operator=(Responder&&) = default;
  Responder(const Responder&) = delete;
  Responder& operator=(const Responder&) = delete;
  ~Responder();

  void Send(Response response);
  bool sent() const { return sink_ == nullptr; }

 private:
  std::shared_ptr<Sink> sink_;
};

using Handler = std::function<void(RequestContext& ctx, Responder responder)>;

}  // namespace meshwork::http
