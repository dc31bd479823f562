#include "central/api/viewer_api.h"

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/prepared_answer.h"
#include "common/http/response.h"
#include "common/stream/defaults.h"

namespace meshwork::central {
namespace {

using http::RequestContext;
using http::Responder;

constexpr char kRetryAfterSeconds[] = "2";

// Browser players (hls.js, dash.js) follow the redirect of a cross-origin request only when
// it allows their origin; the node's own answer then applies the stream's CORS (S-22).
http::Response RedirectWithoutLocation() {
  http::Response res = http::MakeResponse(http::Status::found, "", "text/plain");
  res.set(http::beast_http::field::cache_control, "no-store");
  http::AddCors(res, "*");
  return res;
}

http::Response Refusal(const absl::Status& status) {
  http::Response res = http::ErrorResponse(status);
  if (status.code() == absl::StatusCode::kUnavailable) {
    res.set(http::beast_http::field::retry_after, kRetryAfterSeconds);
  }
  res.set(http::beast_http::field::cache_control, "no-store");
  http::AddCors(res, "*");  // so that a browser player can read why
  return res;
}

// P-2: the redirect's fixed part (status, fields, empty body) rendered once per thread (no
// shared reference count between cores); only Location is added per request.
void SendRedirect(Responder& r, const std::string& location) {
  thread_local const auto kPrepared =
      std::make_shared<const http::PreparedAnswer>(RedirectWithoutLocation());
  http::AnswerFields extra;
  if (extra.TryAdd("Location", location)) return r.SendPrepared(kPrepared, extra);
  http::Response res = RedirectWithoutLocation();  // a URL too long for the fixed fields
  res.set(http::beast_http::field::location, location);
  r.Send(std::move(res));
}

std::string WithQuery(std::string url, std::string_view query) {
  if (!query.empty()) absl::StrAppend(&url, "?", std::string(query));
  return url;
}

// Answers with the chosen node: a 302 to `path_and_query` there, or (Z-23) the node's own
// answer through the proxy.
void Deliver(RequestContext& ctx, const RouteNode& node, std::string_view path, ViewerProxy* proxy,
             Responder r) {
  if (!proxy) {
    // The Location: {node URL}{path}[?{query}], in this thread's buffer (its capacity kept
    // from one redirect to the next; SendRedirect copies it into the answer).
    thread_local std::string location;
    location.clear();
    RoutingService::AppendNodeUrl(node, ctx.scheme, location);
    location.append(path);
    if (!ctx.query.empty()) location.append("?").append(ctx.query);
    return SendRedirect(r, location);
  }
  auto endpoints = node.live ? node.live->endpoints() : nullptr;
  if (!endpoints || endpoints->http_port == 0) {
    return r.Send(Refusal(absl::UnavailableError(
        absl::StrCat("node ", node.id, " has not reported its HTTP port yet"))));
  }
  proxy->Forward(ctx, node.hostname, static_cast<uint16_t>(endpoints->http_port),
                 WithQuery(std::string(path), ctx.query), std::move(r));
}

}  // namespace

void AddViewerRoutes(http::Router& router, ConfigService* config, RoutingService* routing,
                     ViewerProxy* proxy, SteeringService* steering) {
  if (steering) {
    router.Add(
        {http::Verb::get}, "/steering/{stream...}", [steering](RequestContext& ctx, Responder r) {
          // RFC 3986: a query is printable ASCII (anything else percent-encoded); the answer
          // carries it back in RELOAD-URI.
          for (char c : ctx.query) {
            if (c <= 0x20 || c >= 0x7f) {
              return r.Send(http::ErrorResponse(absl::InvalidArgumentError(
                  "query: a byte outside printable ASCII (percent-encode it)")));
            }
          }
          SteeringRequest request;
          request.stream = std::string(ctx.params[0]);
          request.client = ctx.client;
          ParseSteeringQuery(ctx.query, request);
          SteeringService::Answer answer = steering->Steer(request);
          http::Response res = http::MakeResponse(static_cast<http::Status>(answer.status),
                                                  answer.body.dump(), "application/json");
          if (answer.retry_after_s > 0) {
            res.set(http::beast_http::field::retry_after, absl::StrCat(answer.retry_after_s));
          }
          res.set(http::beast_http::field::cache_control, "no-store");
          http::AddCors(res, "*");
          r.Send(std::move(res));
        });
  }
  router.Add({http::Verb::get}, "/vod/{name...}",
             [config, routing, proxy](RequestContext& ctx, Responder r) {
               // The asset is the longest configured prefix of the path.
               std::string_view rest = ctx.params[0];
               auto current = config->Current();
               for (size_t end = rest.rfind('/', stream_defaults::kMaxStreamNameBytes);
                    end != std::string_view::npos && end > 0; end = rest.rfind('/', end - 1)) {
                 std::string name(rest.substr(0, end));
                 auto it = current->vod.find(name);
                 if (it == current->vod.end()) continue;
                 auto snapshot = routing->snapshot();
                 auto node =
                     routing->selector().ChooseVod(*snapshot, it->second.object, ctx.client);
                 if (!node.ok()) return r.Send(Refusal(node.status()));
                 return Deliver(ctx, snapshot->nodes()[*node],
                                absl::StrCat("/vod/", std::string(rest)), proxy, std::move(r));
               }
               r.Send(Refusal(absl::NotFoundError("unknown VOD asset")));
             });
  router.Add({http::Verb::get}, "/{path...}", [routing, proxy](RequestContext& ctx, Responder r) {
    // P-2: every viewer's first request comes here; the state is read through this thread's
    // caches and the decision allocates nothing.
    RoutingService::State state = routing->ReadState();
    auto stream = RoutingService::StreamOfPath(*state.snapshot, *state.live, ctx.path);
    if (!stream) {
      return r.Send(Refusal(absl::NotFoundError(
          absl::StrCat("no stream of the cluster matches ", std::string(ctx.path)))));
    }
    auto decision =
        routing->Route(*state.snapshot, *state.live, *stream, ctx.client, RouteMode::kSelect);
    if (!decision.ok()) return r.Send(Refusal(decision.status()));
    // The stream came from the path itself: "/" + stream + "/" + the rest is ctx.path.
    Deliver(ctx, state.snapshot->nodes()[decision->selected], ctx.path, proxy, std::move(r));
  });
}

}  // namespace meshwork::central
