#include "central/api/viewer_proxy.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/http/client.h"
#include "common/http/response.h"
#include "common/log/log.h"

namespace meshwork::central {
namespace {

namespace bh = http::beast_http;

// What the node's answer depends on: ranges and validators, the player's identity, and the
// viewer's credentials (A-3: a token in Authorization or the meshwork_token cookie; A-6: the
// Referer an auth backend may be asked about).
constexpr bh::field kForwardedToNode[] = {bh::field::range,         bh::field::if_range,
                                          bh::field::if_none_match, bh::field::if_modified_since,
                                          bh::field::user_agent,    bh::field::origin,
                                          bh::field::accept,        bh::field::authorization,
                                          bh::field::cookie,        bh::field::referer};
// RFC 9110 7.6.1 (and the framing central makes itself).
constexpr bh::field kNotRelayed[] = {
    bh::field::connection,          bh::field::keep_alive, bh::field::proxy_authenticate,
    bh::field::proxy_authorization, bh::field::te,         bh::field::trailer,
    bh::field::transfer_encoding,   bh::field::upgrade,    bh::field::content_length};

bool Relayed(const bh::fields::value_type& field) {
  for (bh::field f : kNotRelayed) {
    if (field.name() == f) return false;
  }
  return true;
}

http::Response Relay(http::Response from_node) {
  http::Response out;
  out.result(from_node.result());
  out.version(11);
  for (const auto& field : from_node) {
    if (Relayed(field)) out.insert(field.name_string(), field.value());
  }
  out.set(bh::field::via, "1.1 meshwork-central");
  out.body() = std::move(from_node.body());
  out.prepare_payload();
  return out;
}

// The viewer learns that the node failed, not which node nor why (Z-23 keeps the nodes out of
// sight); the log has the rest.
http::Response Failure(const absl::Status& status) {
  const bool late = absl::IsDeadlineExceeded(status);
  http::Response res =
      http::ErrorResponse(late ? http::Status::gateway_timeout : http::Status::bad_gateway,
                          late ? "gateway_timeout" : "bad_gateway",
                          late ? "the node chosen for this viewer did not answer in time"
                               : "the node chosen for this viewer could not be reached");
  res.set(bh::field::cache_control, "no-store");
  return res;
}

}  // namespace

ViewerProxy::ViewerProxy(ViewerProxyOptions options, prometheus::Registry* metrics)
    : options_(options) {
  if (!metrics) return;
  auto& family = prometheus::BuildCounter()
                     .Name("meshwork_central_proxied_total")
                     .Help("Z-23: viewer requests central delivered by proxy, by result")
                     .Register(*metrics);
  answered_ = &family.Add({{"result", "answered"}});
  failed_ = &family.Add({{"result", "node_failed"}});
  overloaded_ = &family.Add({{"result", "overloaded"}});
}

void ViewerProxy::Forward(http::RequestContext& ctx, std::string host, uint16_t port,
                          std::string target, http::Responder r) {
  if (in_flight_.fetch_add(1) >= options_.max_in_flight) {
    in_flight_.fetch_sub(1);
    if (overloaded_) overloaded_->Increment();
    http::Response res = http::ErrorResponse(http::Status::service_unavailable, "overloaded",
                                             "too many viewer requests in flight through central");
    res.set(bh::field::retry_after, "1");
    res.set(bh::field::cache_control, "no-store");
    return r.Send(std::move(res));
  }
  http::ClientRequest request;
  request.host = std::move(host);
  request.port = port;
  request.target = std::move(target);
  request.timeout = options_.timeout;
  request.body_limit_bytes = options_.body_limit_bytes;
  for (bh::field f : kForwardedToNode) {
    // Every line of a field, as one (HTTP/2 browsers send each cookie as a field of its own:
    // joined with "; ", RFC 9113 8.2.3; other lists with ", ").
    std::string value;
    for (auto [it, end] = ctx.request.equal_range(f); it != end; ++it) {
      if (!value.empty()) value += f == bh::field::cookie ? "; " : ", ";
      value.append(it->value().data(), it->value().size());
    }
    if (!value.empty()) {
      request.headers.emplace_back(std::string(bh::to_string(f)), std::move(value));
    }
  }
  request.headers.emplace_back("X-Forwarded-For", ctx.client.ToString());
  request.headers.emplace_back("X-Forwarded-Proto", ctx.ViewerScheme());
  auto responder = std::make_shared<http::Responder>(std::move(r));
  http::AsyncFetch(
      ctx.executor, std::move(request), [this, responder](absl::StatusOr<http::Response> answer) {
        in_flight_.fetch_sub(1);
        if (!answer.ok()) {
          if (failed_) failed_->Increment();
          uint64_t held_back = 0;
          if (failure_log_.Allow(UnixMillis(options_.clock->Now()), &held_back)) {
            log::Warn("proxy_node_failed",
                      {{"error", answer.status().ToString()}, {"held_back", held_back}});
          }
          return responder->Send(Failure(answer.status()));
        }
        if (answered_) answered_->Increment();
        responder->Send(Relay(*std::move(answer)));
      });
}

}  // namespace meshwork::central
