#include "streamer/store/origin_store.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "streamer/store/window_index.h"

namespace meshwork::streamer {

using store_internal::IsNextObject;
using store_internal::LocalAvailabilityStart;
using store_internal::TrimWindow;
using store_internal::UpdateWindow;

namespace {

std::string Base64Url(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
  return out;  // unpadded, as base64url in headers usually is
}

std::string StreamPrefix(const std::string& stream) { return stream + "\n"; }

uint64_t CandidateBytes(const StoredObject& o) {
  uint64_t n = 0;
  for (const auto& c : o.candidates) n += c->size;
  return n;
}

std::string PositionKey(const std::string& stream, const std::string& rendition) {
  return absl::StrCat(stream, "\n", rendition);
}

// How far ahead of its due time, or of the rendition's newest segment, a segment may be
// published: a packager's clock or numbering gone wrong must not push the window past every
// real segment.
constexpr int64_t kMaxAheadSegments = 3;
constexpr int64_t kMaxAheadOfNewest = 1000;

// The lowest and highest msn of a rendition's objects above msn `above`, its init left
// out; (-1, -1) when it has none.
std::pair<int64_t, int64_t> MsnSpan(const OriginRendition& r, int64_t above) {
  int64_t low = -1, high = -1;
  for (const auto& [key, object] : r.objects) {
    if (key.kind == ObjectKey::kInit || key.msn <= above) continue;
    if (low < 0 || key.msn < low) low = key.msn;
    high = std::max(high, key.msn);
  }
  return {low, high};
}

}  // namespace

absl::Status CheckPublishable(const OriginStreamView& view, const std::string& rendition,
                              ObjectKey key, int64_t now_ms, bool timed) {
  // a stream's renditions are kept for its life and copied on every publish: a publisher
  // cannot make up new ones without end.
  if (view.renditions.size() >= kMaxRenditionsPerStream && !view.renditions.contains(rendition)) {
    return absl::ResourceExhaustedError(absl::StrCat("the stream has ", view.renditions.size(),
                                                     " renditions, the most one stream holds"));
  }
  if (key.kind == ObjectKey::kInit) return absl::OkStatus();
  if (key.msn < 0 || key.msn > kMaxMsn) {
    return absl::OutOfRangeError(absl::StrCat("msn ", key.msn, " is out of range"));
  }
  const Template& t = view.policy->tmpl;
  // The local packager's own timing defines the due times (a push faster than real time
  // runs ahead of them); only a packager's objects are held to the template.
  if (!timed && t.known() && t.Due(key.msn) > now_ms + kMaxAheadSegments * t.segment_ms) {
    return absl::FailedPreconditionError(
        absl::StrCat("msn ", key.msn, " is not due for another ", t.Due(key.msn) - now_ms,
                     " ms (the stream's template); check the packager's clock or numbering"));
  }
  auto r = view.renditions.find(rendition);
  if (r != view.renditions.end() && r->second->meta.newest_msn >= 0 &&
      key.msn > r->second->meta.newest_msn + kMaxAheadOfNewest) {
    return absl::FailedPreconditionError(
        absl::StrCat("msn ", key.msn, " is more than ", kMaxAheadOfNewest,
                     " ahead of the newest segment ", r->second->meta.newest_msn));
  }
  return absl::OkStatus();
}

std::string ObjectWaiterKey(const std::string& stream, const std::string& rendition,
                            ObjectKey key) {
  return absl::StrCat(stream, "\n", rendition, "\n", static_cast<int>(key.kind), ":", key.msn, ".",
                      key.part);
}

std::shared_ptr<const StoredObject> OriginRendition::Find(ObjectKey key) const {
  const auto* found = objects.Find(key);
  return found ? *found : nullptr;
}

OriginStore::OriginStore(Options options, const Clock& clock)
    : options_(options),
      clock_(clock),
      waiters_(Waiters::Options{
          .max_waiters = options.max_waiters, .clock = &clock, .sweep = options.sweep_waiters}) {}

std::shared_ptr<OriginStore::Slot> OriginStore::SlotOf(const std::string& stream) const {
  thread_local Snapshot<SlotIndex>::ReadCache cache;
  const SlotIndex& index = *slot_index_.Read(cache);
  auto it = index.find(stream);
  return it == index.end() ? nullptr : it->second.lock();
}

void OriginStore::PublishSlotIndexLocked() {
  auto index = std::make_shared<SlotIndex>();
  for (const auto& [name, slot] : streams_) index->emplace(name, slot);
  slot_index_.Set(std::move(index));
}

std::shared_ptr<const OriginStreamView> OriginStore::View(const std::string& stream) const {
  auto slot = SlotOf(stream);
  return slot ? slot->Get() : nullptr;
}

void OriginStore::Apply(const StreamConfigs& streams) {
  absl::MutexLock write(&write_mu_);
  std::vector<std::string> removed;
  {
    absl::MutexLock lock(&map_mu_);
    for (auto it = streams_.begin(); it != streams_.end();) {
      if (streams.count(it->first)) {
        ++it;
      } else {
        removed.push_back(it->first);
        it = streams_.erase(it);
      }
    }
    if (!removed.empty()) PublishSlotIndexLocked();
  }
  for (const auto& name : removed) waiters_.RemovePrefix(StreamPrefix(name));
  bool added = false;
  for (const auto& [name, config] : streams) {
    auto policy = std::make_shared<OriginPolicy>(OriginPolicy::From(*config));
    policy->serial = ++policy_serial_;
    std::shared_ptr<Slot> slot;
    {
      // The map itself (under write_mu_ nothing else changes it): the index is published
      // once, after the loop.
      absl::MutexLock lock(&map_mu_);
      auto it = streams_.find(name);
      if (it == streams_.end()) {
        auto view = std::make_shared<OriginStreamView>();
        view->name = name;
        view->policy = policy;
        streams_.emplace(name, std::make_shared<Slot>(std::move(view)));
        added = true;
        continue;
      }
      slot = it->second;
    }
    auto current = slot->Get();
    // An availability start derived from the first publish stays until central sets one.
    if (!policy->tmpl.known() && current->policy->tmpl.known() &&
        policy->tmpl.segment_ms == current->policy->tmpl.segment_ms) {
      policy->tmpl.availability_start_ms = current->policy->tmpl.availability_start_ms;
      // Likewise the part target the local packager announced.
      if (policy->tmpl.part_ms == 0) policy->tmpl.part_ms = current->policy->tmpl.part_ms;
    }
    auto next = std::make_shared<OriginStreamView>(*current);
    next->policy = policy;
    slot->Set(std::move(next));
  }
  if (added) {
    absl::MutexLock lock(&map_mu_);
    PublishSlotIndexLocked();
  }
}

absl::StatusOr<OriginStore::PublishResult> OriginStore::Publish(PublishRequest request) {
  auto slot = SlotOf(request.stream);
  if (!slot) {
    return absl::NotFoundError(
        absl::StrCat("stream \"", request.stream, "\" is not placed on this node"));
  }
  int64_t now = NowMs();
  auto candidate = std::make_shared<Candidate>();
  candidate->pipeline = std::move(request.pipeline);
  candidate->region = std::move(request.region);
  candidate->defects = request.defects;
  candidate->chunks = std::move(request.chunks);
  candidate->size = request.size;
  candidate->published_ms = now;
  candidate->serial = serial_.fetch_add(1) + 1;
  candidate->timing = std::move(request.timing);
  const ObjectKey key = request.key;
  PublishResult result = PublishResult::kCreated;
  uint64_t generation = 0;
  std::optional<Position> last;
  int past_end_part = -1;  // a segment published: the part index just past its last part
  {
    absl::MutexLock write(&write_mu_);
    auto current = slot->Get();
    RETURN_IF_ERROR(
        CheckPublishable(*current, request.rendition, key, now, candidate->timing != nullptr));
    // a stream that trimming could not bring under its bytes (objects no segment
    // accounts for: parts without their segments) takes nothing more but its init and a
    // rendition's next segments (each makes older objects trimmable).
    auto target = current->renditions.find(request.rendition);
    const bool next_segment = key.is_segment() && (target == current->renditions.end() ||
                                                   key.msn > target->second->meta.newest_msn);
    if (key.kind != ObjectKey::kInit && !next_segment &&
        current->bytes > options_.max_stream_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the stream holds ", current->bytes, " bytes, more than ",
                       options_.max_stream_bytes, " (--max-stream-bytes), and none can go"));
    }
    auto view = std::make_shared<OriginStreamView>(*current);
    candidate->notifications = view->notifications;
    const Template& current_tmpl = view->policy->tmpl;
    std::optional<Template> tmpl;
    if (candidate->timing && key.is_segment()) {
      // A locally packaged timeline (S-5): due times follow its program date-time; a new
      // timeline (a discontinuity) moves them.
      int64_t start = LocalAvailabilityStart(*candidate->timing, key.msn, current_tmpl.segment_ms);
      if (!current_tmpl.known() ||
          std::abs(start - current_tmpl.availability_start_ms) > current_tmpl.segment_ms / 2) {
        tmpl = current_tmpl;
        tmpl->availability_start_ms = start;
      }
    } else if (key.is_segment() && !current_tmpl.known()) {
      // L-4: no configured availability start: the first segment is due when it arrives.
      tmpl = current_tmpl;
      tmpl->availability_start_ms = tmpl->StartFor(key.msn, now);
    }
    if (request.info && request.info->part_target_ms > 0 &&
        current_tmpl.part_ms != request.info->part_target_ms) {
      if (!tmpl) tmpl = current_tmpl;
      tmpl->part_ms = request.info->part_target_ms;
    }
    if (tmpl) {
      auto policy = std::make_shared<OriginPolicy>(*view->policy);
      policy->tmpl = *tmpl;
      view->policy = std::move(policy);
    }
    auto& rendition_slot = view->renditions[request.rendition];
    auto rendition = rendition_slot ? std::make_shared<OriginRendition>(*rendition_slot)
                                    : std::make_shared<OriginRendition>();
    rendition->name = request.rendition;
    auto& object_slot = rendition->objects.Slot(key);
    auto object = object_slot ? std::make_shared<StoredObject>(*object_slot)
                              : std::make_shared<StoredObject>();
    auto same = std::find_if(object->candidates.begin(), object->candidates.end(),
                             [&](const auto& c) { return c->pipeline == candidate->pipeline; });
    if (same != object->candidates.end()) {
      result = PublishResult::kReplaced;
      rendition->bytes -= (*same)->size;
      view->bytes -= (*same)->size;
      *same = candidate;
    } else {
      object->candidates.push_back(candidate);
    }
    rendition->bytes += candidate->size;
    view->bytes += candidate->size;
    ++object->generation;
    object_slot = object;
    if (key.kind == ObjectKey::kM4s || key.kind == ObjectKey::kPart) rendition->fmp4 = true;
    if (key.kind != ObjectKey::kInit) {
      auto& meta = rendition->meta;
      auto& newest = meta.pipeline_newest[candidate->pipeline];
      newest = std::max(newest, key.msn);
      if (key.is_segment()) {
        if (key.msn >= meta.newest_msn) {
          meta.newest_msn = key.msn;
          rendition->bitrate_bps =
              candidate->size * 8 * 1000 / static_cast<uint64_t>(view->policy->tmpl.segment_ms);
        }
        if (meta.first_msn < 0 || key.msn < meta.first_msn) meta.first_msn = key.msn;
      }
    }
    UpdateWindow(*rendition, *view->policy, key, *candidate, request.info.get(), now);
    TrimLocked(*view, *rendition);
    rendition_slot = rendition;
    generation = object->generation;
    last = rendition->window->Last();
    if (key.is_segment()) {
      const Segment* done = rendition->window->Find(key.msn);
      if (done && !done->parts.empty()) past_end_part = done->parts.back()->index + 1;
    }
    slot->Set(std::move(view));
  }
  // Released outside the writers' mutex: each completion is posted to its own executor.
  waiters_.Publish(ObjectWaiterKey(request.stream, request.rendition, key),
                   Position{static_cast<int64_t>(generation), -1});
  if (last) waiters_.Publish(PositionKey(request.stream, request.rendition), *last);
  if (past_end_part >= 0) {
    // The part a preload hint named past the segment's end: its held readers get their 404.
    waiters_.Publish(ObjectWaiterKey(request.stream, request.rendition,
                                     ObjectKey{ObjectKey::kPart, key.msn, past_end_part}),
                     Position{std::numeric_limits<int64_t>::max(), -1});
  }
  // Then the hooks (S-23 feeds, the recorder), on this thread, outside every lock.
  for (const auto& hook : hooks_) hook(request.stream, request.rendition, key, candidate);
  return result;
}

void OriginStore::TrimLocked(OriginStreamView& view, OriginRendition& changed) {
  // Per rendition: the live window plus S-14's tail, at least min_retain_segments.
  size_t retain = std::max<size_t>(options_.min_retain_segments,
                                   3 * static_cast<size_t>(std::max(1, view.policy->live_window)));
  auto drop_below = [&view](OriginRendition& r, int64_t msn) {
    r.objects.EraseIf([&](const ObjectIndex::Entry& e) {
      if (e.first.kind == ObjectKey::kInit || e.first.msn >= msn) return false;
      uint64_t n = CandidateBytes(*e.second);
      r.bytes -= n;
      view.bytes -= n;
      return true;
    });
    if (r.meta.first_msn >= 0 && r.meta.first_msn < msn) r.meta.first_msn = msn;
    TrimWindow(r);
  };
  if (changed.meta.newest_msn >= static_cast<int64_t>(retain)) {
    drop_below(changed, changed.meta.newest_msn - static_cast<int64_t>(retain) + 1);
  }
  // Per stream: bytes, oldest segments first, keeping each rendition's newest segment.
  auto writable = [&](const OriginRendition* r) -> OriginRendition& {
    if (r == &changed) return changed;
    // Copy before changing: the shared rendition may be in readers' hands.
    auto copy = std::make_shared<OriginRendition>(*r);
    view.renditions[copy->name] = copy;
    return *copy;
  };
  while (view.bytes > options_.max_stream_bytes) {
    const OriginRendition* oldest = nullptr;
    for (const auto& [name, r] : view.renditions) {
      const OriginRendition* c = name == changed.name ? &changed : r.get();
      if (c->meta.first_msn < 0 || c->meta.first_msn >= c->meta.newest_msn) continue;
      if (!oldest || c->meta.first_msn < oldest->meta.first_msn) oldest = c;
    }
    if (oldest) {
      drop_below(writable(oldest), oldest->meta.first_msn + 1);
      continue;
    }
    // No rendition has an older segment to give: parts published past a rendition's newest
    // segment without their own, the lowest msn of them first, never its highest (and never
    // a segment: each rendition's newest stays listed).
    const OriginRendition* holder = nullptr;
    int64_t lowest = -1;
    for (const auto& [name, r] : view.renditions) {
      const OriginRendition* c = name == changed.name ? &changed : r.get();
      auto [low, high] = MsnSpan(*c, c->meta.newest_msn);
      if (low >= 0 && low < high && (!holder || low < lowest)) {
        holder = c;
        lowest = low;
      }
    }
    if (!holder) break;
    OriginRendition& r = writable(holder);
    r.objects.EraseIf([&](const ObjectIndex::Entry& e) {
      if (e.first.kind == ObjectKey::kInit || e.first.msn != lowest) return false;
      uint64_t n = CandidateBytes(*e.second);
      r.bytes -= n;
      view.bytes -= n;
      return true;
    });
  }
}

absl::Status OriginStore::AdoptNotifications(const std::string& stream, uint64_t seq,
                                             std::string header) {
  if (header.size() > options_.max_notification_header_bytes) {
    return absl::OutOfRangeError(absl::StrCat("a notification header of ", header.size(),
                                              " bytes (at most ",
                                              options_.max_notification_header_bytes, ")"));
  }
  auto slot = SlotOf(stream);
  if (!slot) {
    return absl::NotFoundError(absl::StrCat("stream \"", stream, "\" is not placed on this node"));
  }
  absl::MutexLock write(&write_mu_);
  auto current = slot->Get();
  if (seq <= current->notification_seq) return absl::OkStatus();
  auto view = std::make_shared<OriginStreamView>(*current);
  view->notification_seq = seq;
  view->notifications = std::make_shared<const std::string>(std::move(header));
  slot->Set(std::move(view));
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> OriginStore::Notify(const std::string& stream,
                                             const nlohmann::json& event) {
  auto slot = SlotOf(stream);
  if (!slot) {
    return absl::NotFoundError(absl::StrCat("stream \"", stream, "\" is not placed on this node"));
  }
  absl::MutexLock write(&write_mu_);
  auto view = std::make_shared<OriginStreamView>(*slot->Get());
  // Cumulative: earlier events carry over, newest last, the oldest dropped beyond the bounds
  // (a count, and the header's size: edges and players refuse large headers).
  auto& events = view->notification_events;
  if (!events.is_array()) events = nlohmann::json::array();
  events.push_back(event);
  while (events.size() > options_.max_notifications) events.erase(events.begin());
  uint64_t seq = view->notification_seq + 1;
  std::string header;
  while (true) {
    nlohmann::json state = {{"seq", seq}, {"events", events}};
    header = Base64Url(state.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (header.size() <= options_.max_notification_header_bytes) break;
    if (events.size() == 1) {
      return absl::OutOfRangeError(absl::StrCat("the notification makes a header of ",
                                                header.size(), " bytes (at most ",
                                                options_.max_notification_header_bytes, ")"));
    }
    events.erase(events.begin());
  }
  view->notification_seq = seq;
  view->notifications = std::make_shared<const std::string>(std::move(header));
  slot->Set(std::move(view));
  return seq;
}

ReadDecision OriginStore::Decide(const OriginStreamView& view, const OriginRendition* rendition,
                                 ObjectKey key) const {
  const int64_t now = NowMs();
  const Template& t = view.policy->tmpl;
  auto hold_for_first = [&] {
    ReadDecision d;
    d.verdict = ReadDecision::kHold;
    d.until_ms = now + t.segment_ms + t.retry_deadline_ms;
    return d;
  };
  if (!rendition) {
    // L-6: an unknown rendition is 404, except before anything is published to the stream
    // (L-7): then the first objects are waited for (per the template when it says more).
    if (!view.renditions.empty() || key.kind == ObjectKey::kInit) return ReadDecision{};
    if (!t.known()) return hold_for_first();
    if (IsFirstDue(t, key, now)) {
      ReadDecision d;
      d.verdict = ReadDecision::kHold;
      d.until_ms =
          t.Due(key.msn, key.kind == ObjectKey::kPart ? key.part : -1) + t.retry_deadline_ms;
      return d;
    }
    return DecideRead(*view.policy, RenditionMeta{}, key, now,
                      [] { return std::shared_ptr<const StoredObject>(); });
  }
  // S-12: a part past the end of a complete segment (a preload hint named it while the
  // segment was open, then the next keyframe closed the segment) never comes: 404 at once.
  if (key.kind == ObjectKey::kPart && rendition->window) {
    const Segment* segment = rendition->window->Find(key.msn);
    if (segment && !segment->parts.empty() && key.part > segment->parts.back()->index) {
      return ReadDecision{};
    }
  }
  // L-7, S-13: the object right after the last one published (the preload hint's part, the
  // next segment) is held whatever the template predicts: a source running ahead of or
  // behind the wall clock must not turn it into a 404.
  if (rendition->window && IsNextObject(*rendition->window, key)) {
    lookups_.fetch_add(1, std::memory_order_relaxed);
    auto object = rendition->Find(key);
    if (!object) {
      ReadDecision d = hold_for_first();
      d.looked_up = true;
      return d;
    }
  }
  return DecideRead(*view.policy, rendition->meta, key, now, [&] {
    lookups_.fetch_add(1, std::memory_order_relaxed);
    return rendition->Find(key);
  });
}

absl::Status OriginStore::Wait(const std::string& stream, const std::string& rendition,
                               ObjectKey key, uint64_t seen_generation,
                               boost::asio::any_io_executor executor, Waiters::TimePoint deadline,
                               Waiters::Callback callback) {
  std::string waiter_key = ObjectWaiterKey(stream, rendition, key);
  auto status = waiters_.Wait(waiter_key, Position{static_cast<int64_t>(seen_generation) + 1, -1},
                              std::move(executor), deadline, std::move(callback));
  if (!status.ok()) return status;
  // Published between the caller's decision and the registration: release now.
  if (auto view = View(stream)) {
    auto r = view->renditions.find(rendition);
    if (r != view->renditions.end()) {
      if (auto object = r->second->Find(key)) {
        waiters_.Publish(waiter_key, Position{static_cast<int64_t>(object->generation), -1});
      }
    }
  } else {
    waiters_.Remove(waiter_key);
  }
  return absl::OkStatus();
}

void OriginStore::WakeObjectWaiters(const std::string& stream, const std::string& rendition,
                                    ObjectKey key) {
  waiters_.Publish(ObjectWaiterKey(stream, rendition, key),
                   Position{std::numeric_limits<int64_t>::max(), -1});
}

std::function<uint64_t(int64_t msn)> ListedVersions(std::shared_ptr<const OriginStreamView> view,
                                                    const std::string& rendition, bool ts) {
  std::shared_ptr<const OriginRendition> r;
  if (view) {
    if (auto it = view->renditions.find(rendition); it != view->renditions.end()) r = it->second;
  }
  return [view = std::move(view), r = std::move(r), ts](int64_t msn) -> uint64_t {
    if (!r) return 1;
    auto object = r->Find(ObjectKey{ts ? ObjectKey::kTs : ObjectKey::kM4s, msn, -1});
    // The segment in progress has parts and no whole object yet: its first part speaks for
    // it (the same pipeline and region, so the same masks and versions).
    if (!object && !ts) object = r->Find(ObjectKey{ObjectKey::kPart, msn, 0});
    auto chosen = object ? ChooseCandidate(*view->policy, *object, msn) : nullptr;
    return chosen ? view->policy->VersionOf(*chosen, msn) : 0;
  };
}

absl::Status OriginStore::PublishLocal(const std::string& stream, const RenditionInfo& info,
                                       ObjectKey key,
                                       std::vector<std::shared_ptr<const std::string>> chunks,
                                       std::shared_ptr<const MediaTiming> timing) {
  PublishRequest request;
  request.stream = stream;
  request.rendition = info.name;
  request.key = key;
  request.pipeline = "local";
  for (const auto& c : chunks) request.size += c->size();
  request.chunks = std::move(chunks);
  request.timing = std::move(timing);
  request.info = std::make_shared<const RenditionInfo>(info);
  return Publish(std::move(request)).status();
}

absl::Status OriginStore::WaitPosition(const std::string& stream, const std::string& rendition,
                                       Position position, boost::asio::any_io_executor executor,
                                       std::chrono::steady_clock::time_point deadline,
                                       Waiters::Callback callback) {
  std::string key = PositionKey(stream, rendition);
  auto status = waiters_.Wait(key, position, std::move(executor), deadline, std::move(callback));
  if (!status.ok()) return status;
  // Published between the caller's look and the registration (a part of the open segment
  // counts): release now.
  auto view = View(stream);
  if (!view) {
    waiters_.Remove(key);
  } else if (auto w = Window(stream, rendition)) {
    if (auto last = w->Last()) waiters_.Publish(key, *last);
  }
  return absl::OkStatus();
}

std::vector<std::shared_ptr<const RenditionWindow>> OriginStore::Windows(
    const std::string& stream) const {
  std::vector<std::shared_ptr<const RenditionWindow>> out;
  auto view = View(stream);
  if (!view) return out;
  for (const auto& [name, r] : view->renditions) {
    if (r->window) out.push_back(r->window);
  }
  return out;
}

int64_t OriginStore::LastPublishMs(const std::string& stream) const {
  int64_t newest = 0;
  for (const auto& w : Windows(stream)) newest = std::max(newest, w->last_publish_unix_ms);
  return newest;
}

std::shared_ptr<const RenditionWindow> OriginStore::Window(const std::string& stream,
                                                           const std::string& rendition) const {
  auto view = View(stream);
  if (!view) return nullptr;
  auto it = view->renditions.find(rendition);
  return it == view->renditions.end() ? nullptr : it->second->window;
}

}  // namespace meshwork::streamer
