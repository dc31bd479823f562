#include "streamer/delivery/streamed_segment.h"

#include <utility>

namespace meshwork::streamer {
namespace {

class SegmentPump : public std::enable_shared_from_this<SegmentPump> {
 public:
  SegmentPump(OriginStore* store, std::string stream, std::string rendition, int64_t msn,
              std::chrono::milliseconds hold, std::shared_ptr<http::ChunkedWriter> writer,
              boost::asio::any_io_executor executor)
      : store_(store),
        stream_(std::move(stream)),
        rendition_(std::move(rendition)),
        msn_(msn),
        hold_(hold),
        writer_(std::move(writer)),
        executor_(std::move(executor)) {}

  // Writes every part available past the last written, then waits for the next one.
  void Pump() {
    auto w = store_->Window(stream_, rendition_);
    if (!w || writer_->closed()) return writer_->Finish();
    const Segment* done = w->Find(msn_);
    const auto* parts = done ? &done->parts : w->open_msn == msn_ ? &w->open_parts : nullptr;
    if (parts) {
      for (; next_ < static_cast<int>(parts->size()); ++next_) {
        Write(ObjectKey{ObjectKey::kPart, msn_, (*parts)[next_]->index});
      }
      if (done && next_ == 0 && parts->empty()) {
        // Completed without parts (a packager that publishes whole segments): its bytes.
        Write(ObjectKey{ObjectKey::kM4s, msn_, -1});
      }
      if (done) return writer_->Finish();
    } else if (next_ != 0 ||
               DecideObject(*store_, stream_, rendition_, ObjectKey{ObjectKey::kPart, msn_, 0})
                       .verdict != ReadDecision::kHold) {
      // Not open yet: waited for only while the store would hold a read of its first part
      // (the next object, L-7); otherwise the segment will not come (or not soon).
      return writer_->Finish();
    }
    auto self = shared_from_this();
    auto status =
        store_->WaitPosition(stream_, rendition_, Position{msn_, next_}, executor_,
                             store_->clock().Monotonic() + hold_, [self](Waiters::Outcome outcome) {
                               if (outcome == Waiters::Outcome::kPublished) {
                                 self->Pump();
                               } else {
                                 self->writer_->Finish();
                               }
                             });
    if (!status.ok()) writer_->Finish();
  }

 private:
  // Writes the object's bytes when the store serves it (a masked or missing part is left out).
  void Write(ObjectKey key) {
    ReadDecision d = DecideObject(*store_, stream_, rendition_, key);
    if (d.verdict != ReadDecision::kServe || !d.candidate) return;
    for (const auto& chunk : d.candidate->chunks) writer_->Write(chunk);
  }

  OriginStore* store_;
  const std::string stream_, rendition_;
  const int64_t msn_;
  const std::chrono::milliseconds hold_;
  std::shared_ptr<http::ChunkedWriter> writer_;
  boost::asio::any_io_executor executor_;
  int next_ = 0;
};

}  // namespace

ReadDecision DecideObject(const OriginStore& store, const std::string& stream,
                          const std::string& rendition, ObjectKey key) {
  auto view = store.View(stream);
  if (!view) return ReadDecision{};
  auto it = view->renditions.find(rendition);
  return store.Decide(*view, it == view->renditions.end() ? nullptr : it->second.get(), key);
}

bool StreamsAsParts(const OriginStore& store, const std::string& stream,
                    const std::string& rendition, int64_t msn) {
  auto w = store.Window(stream, rendition);
  if (!w) return false;
  bool made_of_parts =
      w->open_msn >= 0 || (!w->segments.empty() && !w->segments.back()->parts.empty());
  return made_of_parts &&
         DecideObject(store, stream, rendition, ObjectKey{ObjectKey::kM4s, msn, -1}).verdict ==
             ReadDecision::kHold;
}

void StreamSegmentParts(OriginStore* store, std::string stream, std::string rendition, int64_t msn,
                        std::chrono::milliseconds hold, std::shared_ptr<http::ChunkedWriter> writer,
                        boost::asio::any_io_executor executor) {
  std::make_shared<SegmentPump>(store, std::move(stream), std::move(rendition), msn, hold,
                                std::move(writer), std::move(executor))
      ->Pump();
}

}  // namespace meshwork::streamer
