#include "streamer/delivery/push_route.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "common/http/response.h"
#include "common/log/log.h"

namespace meshwork::streamer {

using http::RequestContext;
using http::Responder;

void ServePush(StreamManager* streams, RequestContext& ctx, std::shared_ptr<http::BodyReader> body,
               Responder r, const std::string& stream, bool take_over) {
  auto pipeline = streams->Find(stream);
  if (!pipeline) {
    return r.Send(http::ErrorResponse(
        absl::NotFoundError(absl::StrCat("stream \"", stream, "\" is not placed on this node"))));
  }
  auto session = pipeline->BeginPush(take_over);
  if (!session.ok()) {
    log::Warn("push_refused", {{"stream", stream},
                               {"client", ctx.client.ToString()},
                               {"error", session.status().message()}});
    return r.Send(http::ErrorResponse(session.status()));
  }
  log::Info("push_started",
            {{"stream", stream}, {"client", ctx.client.ToString()}, {"took_over", take_over}});
  // Reads until the end of the body; each chunk goes straight to the demuxer.
  struct Loop : std::enable_shared_from_this<Loop> {
    std::shared_ptr<StreamPipeline> pipeline;
    std::shared_ptr<http::BodyReader> body;
    uint64_t session;
    std::string stream;
    uint64_t bytes = 0;
    std::optional<Responder> responder;
    void Next() {
      body->Read([self = shared_from_this()](const absl::Status& status,
                                             std::span<const uint8_t> chunk,
                                             bool done) { self->OnChunk(status, chunk, done); });
    }
    void OnChunk(const absl::Status& status, std::span<const uint8_t> chunk, bool done) {
      if (!status.ok()) {
        pipeline->EndPush(session);
        log::Warn("push_broken",
                  {{"stream", stream}, {"bytes", bytes}, {"error", status.ToString()}});
        responder->Send(http::ErrorResponse(status));
        return;
      }
      bytes += chunk.size();
      if (!chunk.empty() && !pipeline->FeedPush(session, chunk)) {
        log::Warn("push_superseded", {{"stream", stream}, {"bytes", bytes}});
        responder->Send(http::ErrorResponse(absl::AbortedError(
            "another publisher took over this stream, or its settings changed")));
        return;
      }
      if (done) {
        pipeline->EndPush(session);
        log::Info("push_ended", {{"stream", stream}, {"bytes", bytes}});
        responder->Send(http::MakeResponse(http::Status::no_content, "", "text/plain"));
        return;
      }
      Next();
    }
  };
  auto loop = std::make_shared<Loop>();
  loop->pipeline = std::move(pipeline);
  loop->body = std::move(body);
  loop->session = *session;
  loop->stream = stream;
  loop->responder.emplace(std::move(r));
  loop->Next();
}

}  // namespace meshwork::streamer
