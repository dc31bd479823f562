#include "common/process/process.h"

#include <malloc.h>

#include <algorithm>
#include <csignal>
#include <cstdio>

#include "absl/synchronization/mutex.h"

namespace meshwork {

namespace {
sigset_t ShutdownSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
sigset_t ShutdownAndReloadSet() {
  sigset_t set = ShutdownSet();
  sigaddset(&set, SIGHUP);
  return set;
}
}  // namespace

void BlockShutdownSignals() {
  sigset_t set = ShutdownSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int WaitForShutdownSignal() {
  sigset_t set = ShutdownSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void BlockShutdownAndReloadSignals() {
  sigset_t set = ShutdownAndReloadSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int WaitForShutdownOrReloadSignal() {
  sigset_t set = ShutdownAndReloadSet();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void AnnounceReady(const nlohmann::json& listeners) {
  std::printf("READY %s\n", listeners.dump().c_str());
  std::fflush(stdout);
}

}  // namespace meshwork

namespace meshwork {
void NormalizeFlagNames(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    char* a = argv[i];
    if (a[0] != '-' || a[1] != '-') continue;
    for (char* p = a + 2; *p && *p != '='; ++p) {
      if (*p == '-') *p = '_';
    }
  }
}
void ConfigureServerRuntime() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

bool RetainHeapMemory(size_t keep_bytes) {
  if (keep_bytes == 0) return true;
  // glibc's largest mmap threshold on 64-bit (half its per-thread heap): every buffer below it
  // comes from an arena.
  constexpr int kMmapThreshold = 32 << 20;
  const int trim = static_cast<int>(std::min<size_t>(keep_bytes, size_t{1} << 30));
  return mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim) == 1;
}

}  // namespace meshwork
