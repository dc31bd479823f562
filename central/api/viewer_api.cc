#include "central/api/viewer_api.h"

#include "absl/strings/str_cat.h"
#include "common/http/response.h"

namespace meshwork::central {
namespace {

using http::RequestContext;
using http::Responder;

constexpr char kRetryAfterSeconds[] = "2";

http::Response Redirect(const std::string& location) {
  http::Response res = http::MakeResponse(http::Status::found, "", "text/plain");
  res.set(http::beast_http::field::location, location);
  res.set(http::beast_http::field::cache_control, "no-store");
  return res;
}

http::Response Refusal(const absl::Status& status) {
  http::Response res = http::ErrorResponse(status);
  if (status.code() == absl::StatusCode::kUnavailable) {
    res.set(http::beast_http::field::retry_after, kRetryAfterSeconds);
  }
  res.set(http::beast_http::field::cache_control, "no-store");
  return res;
}

std::string WithQuery(std::string url, std::string_view query) {
  if (!query.empty()) absl::StrAppend(&url, "?", std::string(query));
  return url;
}

}  // namespace

void AddViewerRoutes(http::Router& router, ConfigService* config, RoutingService* routing) {
  router.Add(
      {http::Verb::get}, "/vod/{name...}", [config, routing](RequestContext& ctx, Responder r) {
        // The asset is the longest configured prefix of the path.
        std::string_view rest = ctx.params[0];
        auto current = config->Current();
        for (size_t end = rest.rfind('/'); end != std::string_view::npos && end > 0;
             end = rest.rfind('/', end - 1)) {
          std::string name(rest.substr(0, end));
          auto it = current->vod.find(name);
          if (it == current->vod.end()) continue;
          auto snapshot = routing->snapshot();
          auto node = routing->selector().ChooseVod(*snapshot, it->second.object, ctx.client);
          if (!node.ok()) return r.Send(Refusal(node.status()));
          std::string url =
              absl::StrCat(RoutingService::NodeUrl(snapshot->nodes()[*node], ctx.scheme), "/vod/",
                           std::string(rest));
          return r.Send(Redirect(WithQuery(url, ctx.query)));
        }
        r.Send(Refusal(absl::NotFoundError("unknown VOD asset")));
      });
  router.Add({http::Verb::get}, "/{path...}", [routing](RequestContext& ctx, Responder r) {
    auto snapshot = routing->snapshot();
    auto split = routing->SplitStreamPath(*snapshot, ctx.path);
    if (!split) {
      return r.Send(Refusal(absl::NotFoundError(
          absl::StrCat("no stream of the cluster matches ", std::string(ctx.path)))));
    }
    auto decision = routing->Route(*snapshot, split->first, ctx.client, RouteMode::kDecide);
    if (!decision.ok()) return r.Send(Refusal(decision.status()));
    std::string url =
        absl::StrCat(RoutingService::NodeUrl(snapshot->nodes()[decision->selected], ctx.scheme),
                     "/", split->first, "/", split->second);
    r.Send(Redirect(WithQuery(std::move(url), ctx.query)));
  });
}

}  // namespace meshwork::central
