// ThreadSanitizer support for a prebuilt (uninstrumented) Abseil, linked into every executable
// of the MESHWORK_SANITIZE=thread build.
//
// Debian's libabsl_synchronization is not built with -fsanitize=thread, so TSan cannot see
// absl::Mutex synchronise anything: every ABSL_GUARDED_BY member read by two threads would be
// reported as a race. Abseil annotates itself for TSan only when it is compiled with it. This
// file interposes the public locking entry points of absl::Mutex and absl::CondVar (the
// executable's definitions win over the shared library's, for callers in libabsl and libgrpc
// as well), calls the library's own implementation through dlsym(RTLD_NEXT), and tells TSan
// about the happens-before edges a mutex provides:
//   - an unlock releases, a later lock acquires (writers release to one address, readers to
//     another: a writer acquires both, a reader only the writers', as TSan models RW locks);
//   - Await/LockWhen/CondVar waits release before the call and acquire after it;
//   - conditions are wrapped so that their evaluation (which Abseil may run in the waiting
//     thread or in the unlocking one, with the mutex held) acquires first and releases after.
// absl::Notification gets the same treatment. Only happens-before is modelled: TSan's
// lock-order (deadlock) reports do not cover absl::Mutex. Nothing here changes what the mutex
// does.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/base/options.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#if !defined(__SANITIZE_THREAD__) && !(defined(__has_feature) && __has_feature(thread_sanitizer))
#error "tsan_absl_mutex.cc is only for -fsanitize=thread builds"
#endif

namespace {

#define MESHWORK_STR2(x) #x
#define MESHWORK_STR(x) MESHWORK_STR2(x)

// The library's symbol for "absl::<inline namespace>::" + rest (Itanium mangling; the rest,
// with its substitutions, does not depend on the inline namespace's name).
template <typename Fn>
Fn Real(const char* rest, bool const_method = false) {
  std::string ns = "";
#if ABSL_OPTION_USE_INLINE_NAMESPACE
  const char* inline_ns = MESHWORK_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  ns = std::to_string(std::string(inline_ns).size()) + inline_ns;
#endif
  std::string name = std::string(const_method ? "_ZNK" : "_ZN") + "4absl" + ns + rest;
  void* f = dlsym(RTLD_NEXT, name.c_str());
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found: %s\n", name.c_str(), dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

void* WriterSync(const absl::Mutex* mu) { return const_cast<absl::Mutex*>(mu); }
void* ReaderSync(const absl::Mutex* mu) {
  return reinterpret_cast<char*>(const_cast<absl::Mutex*>(mu)) + 1;
}
void AcquireWriter(const absl::Mutex* mu) {
  __tsan_acquire(WriterSync(mu));
  __tsan_acquire(ReaderSync(mu));
}
void AcquireReader(const absl::Mutex* mu) { __tsan_acquire(WriterSync(mu)); }
void ReleaseWriter(const absl::Mutex* mu) { __tsan_release(WriterSync(mu)); }
void ReleaseReader(const absl::Mutex* mu) { __tsan_release(ReaderSync(mu)); }
// Await and condition-variable waits do not say in which mode the mutex is held: release to
// both (at worst this hides a race between two readers' writes, which is a bug anyway).
void ReleaseEither(const absl::Mutex* mu) {
  ReleaseWriter(mu);
  ReleaseReader(mu);
}

// The caller's condition, evaluated after acquiring the mutex. Abseil may evaluate it in the
// thread that unlocks the mutex, which reads this struct (and the caller's Condition) without
// any synchronisation TSan sees: the waiter releases on the struct's address once it is built.
// Built with the void* constructor so that the trampoline is Abseil's (uninstrumented) one.
class WrappedCondition {
 public:
  WrappedCondition(const absl::Condition& condition, const absl::Mutex* mu)
      : condition_(&condition), mu_(mu) {
    __tsan_release(this);
  }
  absl::Condition condition() { return absl::Condition(&WrappedCondition::Eval, this); }

 private:
  static bool Eval(void* arg) {
    __tsan_acquire(arg);
    auto* w = static_cast<WrappedCondition*>(arg);
    AcquireWriter(w->mu_);
    bool result = w->condition_->Eval();
    // What the condition read happens before the next holder's writes: the evaluating thread
    // holds the mutex now, but its release happened before the wait (or is the unlock that
    // runs this evaluation).
    ReleaseWriter(w->mu_);
    return result;
  }
  const absl::Condition* condition_;
  const absl::Mutex* mu_;
};

using Void = void (*)(absl::Mutex*);
using Bool = bool (*)(absl::Mutex*);
using Cond = void (*)(absl::Mutex*, const absl::Condition&);
using CondBool = bool (*)(absl::Mutex*, const absl::Condition&);
using CondDuration = bool (*)(absl::Mutex*, const absl::Condition&, absl::Duration);
using CondTime = bool (*)(absl::Mutex*, const absl::Condition&, absl::Time);
using CvWait = void (*)(absl::CondVar*, absl::Mutex*);
using CvDuration = bool (*)(absl::CondVar*, absl::Mutex*, absl::Duration);
using CvTime = bool (*)(absl::CondVar*, absl::Mutex*, absl::Time);

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  static const auto real = Real<Void>("5Mutex4LockEv");
  real(this);
  AcquireWriter(this);
}

void Mutex::Unlock() {
  static const auto real = Real<Void>("5Mutex6UnlockEv");
  ReleaseWriter(this);
  real(this);
}

bool Mutex::TryLock() {
  static const auto real = Real<Bool>("5Mutex7TryLockEv");
  bool locked = real(this);
  if (locked) AcquireWriter(this);
  return locked;
}

void Mutex::ReaderLock() {
  static const auto real = Real<Void>("5Mutex10ReaderLockEv");
  real(this);
  AcquireReader(this);
}

void Mutex::ReaderUnlock() {
  static const auto real = Real<Void>("5Mutex12ReaderUnlockEv");
  ReleaseReader(this);
  real(this);
}

bool Mutex::ReaderTryLock() {
  static const auto real = Real<Bool>("5Mutex13ReaderTryLockEv");
  bool locked = real(this);
  if (locked) AcquireReader(this);
  return locked;
}

void Mutex::LockWhen(const Condition& cond) {
  static const auto real = Real<Cond>("5Mutex8LockWhenERKNS0_9ConditionE");
  WrappedCondition w(cond, this);
  real(this, w.condition());
  AcquireWriter(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  static const auto real = Real<Cond>("5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  WrappedCondition w(cond, this);
  real(this, w.condition());
  AcquireReader(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real =
      Real<CondDuration>("5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  WrappedCondition w(cond, this);
  bool result = real(this, w.condition(), timeout);
  AcquireWriter(this);
  return result;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real =
      Real<CondTime>("5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  WrappedCondition w(cond, this);
  bool result = real(this, w.condition(), deadline);
  AcquireWriter(this);
  return result;
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real =
      Real<CondDuration>("5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  WrappedCondition w(cond, this);
  bool result = real(this, w.condition(), timeout);
  AcquireReader(this);
  return result;
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real =
      Real<CondTime>("5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  WrappedCondition w(cond, this);
  bool result = real(this, w.condition(), deadline);
  AcquireReader(this);
  return result;
}

void Mutex::Await(const Condition& cond) {
  static const auto real = Real<Cond>("5Mutex5AwaitERKNS0_9ConditionE");
  WrappedCondition w(cond, this);
  ReleaseEither(this);
  real(this, w.condition());
  AcquireWriter(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, absl::Duration timeout) {
  static const auto real =
      Real<CondDuration>("5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  WrappedCondition w(cond, this);
  ReleaseEither(this);
  bool result = real(this, w.condition(), timeout);
  AcquireWriter(this);
  return result;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, absl::Time deadline) {
  static const auto real = Real<CondTime>("5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  WrappedCondition w(cond, this);
  ReleaseEither(this);
  bool result = real(this, w.condition(), deadline);
  AcquireWriter(this);
  return result;
}

void CondVar::Wait(Mutex* mu) {
  static const auto real = Real<CvWait>("7CondVar4WaitEPNS0_5MutexE");
  ReleaseEither(mu);
  real(this, mu);
  AcquireWriter(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration timeout) {
  static const auto real = Real<CvDuration>("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  ReleaseEither(mu);
  bool result = real(this, mu, timeout);
  AcquireWriter(mu);
  return result;
}

bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time deadline) {
  static const auto real = Real<CvTime>("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  ReleaseEither(mu);
  bool result = real(this, mu, deadline);
  AcquireWriter(mu);
  return result;
}

// Notification: Notify releases on the flag's address; the waits, and HasBeenNotified (an
// inline acquire load of that flag, instrumented in the caller), acquire from it.
void Notification::Notify() {
  static const auto real = Real<void (*)(Notification*)>("12Notification6NotifyEv");
  __tsan_release(const_cast<std::atomic<bool>*>(&notified_yet_));
  real(this);
}

void Notification::WaitForNotification() const {
  static const auto real =
      Real<void (*)(const Notification*)>("12Notification19WaitForNotificationEv", true);
  real(this);
  __tsan_acquire(const_cast<std::atomic<bool>*>(&notified_yet_));
}

bool Notification::WaitForNotificationWithTimeout(absl::Duration timeout) const {
  static const auto real = Real<bool (*)(const Notification*, absl::Duration)>(
      "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", true);
  bool result = real(this, timeout);
  __tsan_acquire(const_cast<std::atomic<bool>*>(&notified_yet_));
  return result;
}

bool Notification::WaitForNotificationWithDeadline(absl::Time deadline) const {
  static const auto real = Real<bool (*)(const Notification*, absl::Time)>(
      "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", true);
  bool result = real(this, deadline);
  __tsan_acquire(const_cast<std::atomic<bool>*>(&notified_yet_));
  return result;
}

ABSL_NAMESPACE_END
}  // namespace absl
