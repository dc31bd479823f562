#include "streamer/delivery/streamed_segment.h"

#include <algorithm>
#include <optional>
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

  // Writes every part available past the last written, in part-number order, then waits for
  // the next one. Every ending but "the segment is complete and every part of it was written"
  // aborts the body: a cut-short or holed segment must not reach the player as a whole one.
  void Pump() {
    auto w = store_->Window(stream_, rendition_);
    if (!w || writer_->closed()) return writer_->Abort();
    const Segment* done = w->Find(msn_);
    const auto* parts = done ? &done->parts : w->open_msn == msn_ ? &w->open_parts : nullptr;
    if (parts) {
      int highest = -1;
      for (const auto& part : *parts) highest = std::max(highest, part->index);
      auto listed = [parts](int index) {
        return std::any_of(parts->begin(), parts->end(),
                           [index](const auto& part) { return part->index == index; });
      };
      // Parts go out in part-number order, each once. A number below a listed one that is not
      // listed itself is one the packager never made ("a1" has no part where v1's had no
      // audio): passed over. Then the next number past the highest is waited for.
      for (; next_ <= highest; ++next_) {
        if (!listed(next_)) continue;
        if (!Write(ObjectKey{ObjectKey::kPart, msn_, next_})) return;
      }
      if (done && next_ == 0 && parts->empty()) {
        // Completed without parts (a packager that publishes whole segments): its bytes.
        if (!Write(ObjectKey{ObjectKey::kM4s, msn_, -1})) return;
        return writer_->Finish();
      }
      if (done) return writer_->Finish();
    } else if (next_ != 0 ||
               DecideObject(*store_, stream_, rendition_, ObjectKey{ObjectKey::kPart, msn_, 0})
                       .verdict != ReadDecision::kHold) {
      // Not open yet: waited for only while the store would hold a read of its first part
      // (the next object, L-7); otherwise the segment will not come (or not soon). Parts
      // written and the segment neither open nor complete: it was abandoned.
      return writer_->Abort();
    }
    auto self = shared_from_this();
    auto status =
        store_->WaitPosition(stream_, rendition_, Position{msn_, next_}, executor_,
                             store_->clock().Monotonic() + hold_, [self](Waiters::Outcome outcome) {
                               if (outcome == Waiters::Outcome::kPublished) {
                                 self->Pump();
                               } else {
                                 self->writer_->Abort();
                               }
                             });
    if (!status.ok()) writer_->Abort();
  }

 private:
  // Writes the object's bytes when the store serves it and returns true. A part the store
  // holds (L-12: a better-ranked pipeline is still expected to publish it) is waited for, and
  // the pump resumes from it; one that will not be served ends the body. False in both cases.
  bool Write(ObjectKey key) {
    ReadDecision d = DecideObject(*store_, stream_, rendition_, key);
    if (d.verdict == ReadDecision::kServe && d.candidate) {
      for (const auto& chunk : d.candidate->chunks) writer_->Write(chunk);
      waiting_since_.reset();
      return true;
    }
    const auto now = store_->clock().Monotonic();
    if (!waiting_since_) waiting_since_ = now;
    if (d.verdict != ReadDecision::kHold || now - *waiting_since_ >= hold_) {
      writer_->Abort();
      return false;
    }
    // Until the object is published again, or the hold's end (the store serves what it has
    // then), within the pump's bound.
    const int64_t until_ms = d.until_ms - store_->NowMs();
    const auto wait =
        std::clamp(std::chrono::milliseconds(until_ms + 1), std::chrono::milliseconds(1), hold_);
    auto self = shared_from_this();
    auto status = store_->Wait(stream_, rendition_, key, d.generation, executor_, now + wait,
                               [self](Waiters::Outcome outcome) {
                                 if (outcome == Waiters::Outcome::kRemoved) {
                                   self->writer_->Abort();
                                 } else {
                                   self->Pump();
                                 }
                               });
    if (!status.ok()) writer_->Abort();
    return false;
  }

  OriginStore* store_;
  const std::string stream_, rendition_;
  const int64_t msn_;
  const std::chrono::milliseconds hold_;
  std::shared_ptr<http::ChunkedWriter> writer_;
  boost::asio::any_io_executor executor_;
  int next_ = 0;  // the part number written next
  // When the pump began waiting on a held part (unset while parts flow): bounded by `hold_`.
  std::optional<std::chrono::steady_clock::time_point> waiting_since_;
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
