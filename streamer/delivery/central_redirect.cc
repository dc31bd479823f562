#include "streamer/delivery/central_redirect.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/http/content.h"
#include "common/http/response.h"
#include "streamer/delivery/responses.h"

namespace meshwork::streamer {
namespace {

namespace bh = http::beast_http;

}  // namespace

CentralRedirect::CentralRedirect(Options options, std::string self_id, AskFn ask,
                                 const Clock& clock, prometheus::Registry* metrics)
    : options_(options), self_id_(std::move(self_id)), ask_(std::move(ask)), clock_(clock) {
  if (!metrics) return;
  auto& family = prometheus::BuildCounter()
                     .Name("meshwork_central_route_asks_total")
                     .Help(
                         "Z-22: viewer requests this node could not answer itself, by how "
                         "central's Route was consulted")
                     .Register(*metrics);
  asked_ = &family.Add({{"result", "asked"}});
  cached_ = &family.Add({{"result", "cached"}});
  busy_ = &family.Add({{"result", "busy"}});
}

std::optional<std::string> CentralRedirect::EntryStream(std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  std::string_view file = path.substr(slash + 1);
  if (file != "index.m3u8" && file != "index.ll.m3u8" && file != "index.mpd") return std::nullopt;
  return std::string(path.substr(0, slash));
}

CentralRedirect::Decision CentralRedirect::Decide(
    const absl::StatusOr<v1::RouteResponse>& answer) const {
  Decision d;
  d.expires = clock_.Now() + options_.cache_ttl;
  if (answer.ok() && answer->selected().id() == self_id_) {
    d.code = 404;
    d.message = "no such stream or object on this node";
  } else if (answer.ok() && !answer->selected().url().empty()) {
    d.code = 302;
    d.base_url = answer->selected().url();
  } else if (absl::IsNotFound(answer.status())) {
    d.code = 404;
    d.message = "no such stream in the cluster";
  } else {
    d.code = 503;
    d.message = absl::StrCat("no node to send this viewer to: ", answer.status().message());
    d.expires = clock_.Now();  // not kept: the next viewer asks again
  }
  return d;
}

void CentralRedirect::Send(const Decision& decision, Waiter waiter) {
  if (decision.code == 404) return waiter.responder.Send(NotFound(decision.message, "*"));
  if (decision.code != 302) return waiter.responder.Send(Unavailable(decision.message, "*"));
  std::string location = absl::StrCat(decision.base_url, "/", waiter.stream, "/", waiter.path);
  if (!waiter.query.empty()) absl::StrAppend(&location, "?", waiter.query);
  http::Response res{http::Status::found, 11};
  res.set(bh::field::location, location);
  res.set(bh::field::cache_control, "no-store");
  http::AddCors(res, "*");
  waiter.responder.Send(std::move(res));
}

void CentralRedirect::Redirect(http::RequestContext& ctx, std::string stream, std::string path,
                               http::Responder r) {
  const std::string scheme = ctx.ViewerScheme();
  const std::string client = ctx.client.ToString();
  const std::string key = absl::StrCat(stream, "\n", client, "\n", scheme);
  Waiter waiter{std::move(r), std::move(stream), std::move(path), std::string(ctx.query)};
  std::optional<Decision> known;
  bool ask = false;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(key); it != cache_.end() && it->second.expires > clock_.Now()) {
      known = it->second;
    } else if (auto p = pending_.find(key); p != pending_.end()) {
      p->second.push_back(std::move(waiter));
      return;
    } else if (pending_.size() >= options_.max_in_flight) {
      known = Decision{503, "", "too many viewers waiting for central's routing", {}};
      if (busy_) busy_->Increment();
    } else {
      pending_[key].push_back(std::move(waiter));
      ask = true;
    }
  }
  if (known) {
    if (known->code != 503 && cached_) cached_->Increment();
    return Send(*known, std::move(waiter));
  }
  if (!ask) return;
  if (asked_) asked_->Increment();
  v1::RouteRequest request;
  request.set_stream(key.substr(0, key.find('\n')));
  request.set_client_address(client);
  request.set_scheme(scheme);
  ask_(std::move(request), [this, key](absl::StatusOr<v1::RouteResponse> answer) {
    Completed(key, std::move(answer));
  });
}

void CentralRedirect::Completed(const std::string& key, absl::StatusOr<v1::RouteResponse> answer) {
  Decision decision = Decide(answer);
  std::vector<Waiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    auto p = pending_.find(key);
    if (p != pending_.end()) {
      waiters = std::move(p->second);
      pending_.erase(p);
    }
    if (decision.expires > clock_.Now()) {
      if (cache_.size() >= options_.max_cached) {
        const auto now = clock_.Now();
        std::erase_if(cache_, [now](const auto& e) { return e.second.expires <= now; });
        if (cache_.size() >= options_.max_cached) cache_.clear();
      }
      cache_[key] = decision;
    }
  }
  for (auto& w : waiters) Send(decision, std::move(w));
}

}  // namespace meshwork::streamer
