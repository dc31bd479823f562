#include "absl/base/internal/raw_logging.h"
#include "common/http/session_base.h"

namespace meshwork::http::server_internal {

SessionBase::~SessionBase() {
  if (registry_) registry_->Remove(*this);
}

SessionRegistry::~SessionRegistry() {
  absl::MutexLock lock(&mu_);
  // A session outliving its registry would unlink from freed memory later.
  ABSL_RAW_CHECK(head_ == nullptr, "HTTP sessions outlive their listener's registry");
}

void SessionRegistry::Add(SessionBase& session) {
  ABSL_RAW_CHECK(session.registry_ == nullptr, "an HTTP session registered twice");
  session.registry_ = this;
  absl::MutexLock lock(&mu_);
  session.prev_ = nullptr;
  session.next_ = head_;
  if (head_) head_->prev_ = &session;
  head_ = &session;
  ++size_;
}

void SessionRegistry::Remove(SessionBase& session) {
  absl::MutexLock lock(&mu_);
  if (session.prev_) {
    session.prev_->next_ = session.next_;
  } else {
    head_ = session.next_;
  }
  if (session.next_) session.next_->prev_ = session.prev_;
  session.prev_ = session.next_ = nullptr;
  --size_;
}

std::vector<std::shared_ptr<SessionBase>> SessionRegistry::LiveSessions() {
  std::vector<std::shared_ptr<SessionBase>> live;
  absl::MutexLock lock(&mu_);
  live.reserve(size_);
  for (SessionBase* s = head_; s != nullptr; s = s->next_) {
    // A session whose last reference has dropped is being destroyed: its ~SessionBase waits
    // for this lock to unlink it, and its weak reference is still intact until then.
    if (auto strong = s->weak_from_this().lock()) live.push_back(std::move(strong));
  }
  return live;
}

size_t SessionRegistry::size() {
  absl::MutexLock lock(&mu_);
  return size_;
}

}  // namespace meshwork::http::server_internal
