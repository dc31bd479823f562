#include "streamer/delivery/in_flight_answer.h"

#include <utility>

#include "boost/asio/post.hpp"
#include "streamer/relay/upstream_playlist.h"

namespace meshwork::streamer {
namespace {

// One viewer's answer, pumped on its connection's executor: each wake reads what came since.
class InFlightAnswer : public std::enable_shared_from_this<InFlightAnswer> {
 public:
  InFlightAnswer(std::shared_ptr<GrowingObject> object, std::shared_ptr<http::Responder> r,
                 boost::asio::any_io_executor executor, http::Response header,
                 std::function<void()> fallback)
      : object_(std::move(object)),
        responder_(std::move(r)),
        executor_(std::move(executor)),
        header_(std::move(header)),
        fallback_(std::move(fallback)) {}

  void Pump() {
    if (writer_ && writer_->closed()) return;  // the viewer left: nothing more to send
    auto read = object_->ReadFrom(next_, executor_, [self = shared_from_this()] { self->Pump(); });
    if (!read.chunks.empty() && !writer_) {
      // S-25: a sibling edge dates the part on its parent's timeline run (relay timing field).
      if (auto timing = object_->timing(); !timing.empty()) {
        header_.set(relay::kMediaTimingField, timing);
      }
      writer_ = responder_->StartChunked(std::move(header_));
      if (!writer_) return;
    }
    for (auto& chunk : read.chunks) {
      writer_->Write(std::move(chunk));
      ++next_;
    }
    if (!read.chunks.empty()) {
      // More may have come meanwhile: read again (the wake was not kept: there were chunks).
      return boost::asio::post(executor_, [self = shared_from_this()] { self->Pump(); });
    }
    switch (read.state) {
      case GrowingObject::State::kComplete:
        if (writer_) return writer_->Finish();
        return fallback_();  // complete and empty: the store says what it is
      case GrowingObject::State::kFailed:
        if (writer_) return writer_->Abort();
        return fallback_();
      case GrowingObject::State::kArriving:
        if (!read.waiting) {
          if (writer_) return writer_->Abort();  // cannot wait: never leave a viewer hanging
          return fallback_();
        }
        return;
    }
  }

 private:
  std::shared_ptr<GrowingObject> object_;
  std::shared_ptr<http::Responder> responder_;
  boost::asio::any_io_executor executor_;
  http::Response header_;
  std::function<void()> fallback_;
  std::shared_ptr<http::ChunkedWriter> writer_;
  size_t next_ = 0;
};

}  // namespace

void AnswerInFlight(std::shared_ptr<GrowingObject> object, std::shared_ptr<http::Responder> r,
                    boost::asio::any_io_executor executor, http::Response header,
                    std::function<void()> fallback) {
  std::make_shared<InFlightAnswer>(std::move(object), std::move(r), std::move(executor),
                                   std::move(header), std::move(fallback))
      ->Pump();
}

}  // namespace meshwork::streamer
