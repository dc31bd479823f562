// srt:// MPEG-TS over SRT (libsrt), listener and caller mode, one thread per source.
//
// Waiting for a caller and connecting use SRT epoll with a short timeout; receiving uses a
// blocking socket (SRTO_RCVSYN) with SRTO_RCVTIMEO, so the thread notices Stop() within a
// fraction of a second.
#include <netdb.h>
#include <srt/srt.h>
#include <sys/socket.h>
#include <syslog.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/log/log.h"
#include "streamer/ingest/source_base.h"
#include "streamer/ingest/sources.h"

namespace meshwork::ingest {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kPollTimeoutMs = 200;        // epoll waits and SRTO_RCVTIMEO
constexpr int kPayloadBufferBytes = 1500;  // > SRT_LIVE_MAX_PLSIZE (1456)
constexpr int kKeyLengthBytes = 16;        // AES-128 when a passphrase is set
constexpr auto kRejectCheckEvery = std::chrono::milliseconds(250);
// A listener's caller that sends no payload this long is let go, so that the one slot goes to
// the next caller (R-3: connecting and sending nothing would hold it for ever).
constexpr auto kSilentCallerLimit = std::chrono::seconds(10);

// libsrt's own diagnostics, as key=value lines like ours.
void ForwardSrtLog(void*, int level, const char*, int, const char* area, const char* message) {
  const absl::string_view stripped = absl::StripTrailingAsciiWhitespace(message ? message : "");
  const std::string text(stripped.data(), stripped.size());
  const std::string where = area ? area : "";
  if (level <= LOG_ERR) {
    log::Warn("srt_log", {{"area", where}, {"message", text}});
  } else {
    log::Debug("srt_log", {{"area", where}, {"message", text}});
  }
}

void StartupSrtOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    srt_startup();
    srt_setloglevel(LOG_ERR);
    srt_setlogflags(SRT_LOGF_DISABLE_TIME | SRT_LOGF_DISABLE_THREADNAME |
                    SRT_LOGF_DISABLE_SEVERITY | SRT_LOGF_DISABLE_EOL);
    srt_setloghandler(nullptr, &ForwardSrtLog);
    // srt_cleanup() is never called: sources may exist until the process exits.
  });
}

std::string LastError() { return srt_getlasterror_str(); }

bool SetInt(SRTSOCKET s, SRT_SOCKOPT option, int value) {
  return srt_setsockflag(s, option, &value, sizeof value) != SRT_ERROR;
}

bool SetString(SRTSOCKET s, SRT_SOCKOPT option, const std::string& value) {
  return srt_setsockflag(s, option, value.data(), static_cast<int>(value.size())) != SRT_ERROR;
}

std::string AddressText(const sockaddr* address, socklen_t length) {
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (getnameinfo(address, length, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  if (address->sa_family == AF_INET6) return absl::StrCat("[", host, "]:", port);
  return absl::StrCat(host, ":", port);
}

// An SRT epoll set that releases itself.
class Epoll {
 public:
  Epoll() : eid_(srt_epoll_create()) {}
  ~Epoll() {
    if (eid_ >= 0) srt_epoll_release(eid_);
  }
  Epoll(const Epoll&) = delete;
  Epoll& operator=(const Epoll&) = delete;

  bool Add(SRTSOCKET s, int events) {
    return eid_ >= 0 && srt_epoll_add_usock(eid_, s, &events) == 0;
  }
  // > 0 when `s` has an event, 0 on timeout, < 0 on error.
  int Wait(int timeout_ms) {
    SRT_EPOLL_EVENT ready[2];
    int n = srt_epoll_uwait(eid_, ready, 2, timeout_ms);
    if (n < 0 && srt_getlasterror(nullptr) == SRT_ETIMEOUT) return 0;
    return n;
  }

 private:
  int eid_;
};

class SrtSource final : public SourceBase {
 public:
  SrtSource(std::string url, const SourceUrl& parsed, BytesCallback on_bytes)
      : SourceBase(std::move(url), "srt", std::move(on_bytes)), settings_(parsed) {}

  ~SrtSource() override {
    Stop();
    if (listener_ != SRT_INVALID_SOCK) srt_close(listener_);
  }

  // Listener mode: binds and listens now, so that a busy port fails StartSource.
  absl::Status Open() {
    if (settings_.srt_mode != SrtMode::kListener) return absl::OkStatus();
    addrinfo* found = nullptr;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    const std::string port = std::to_string(settings_.port);
    if (int rc = getaddrinfo(settings_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("input URL \"", log_url(), "\": bad listen address: ", gai_strerror(rc)));
    }
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
    std::string error = ListenOn(found->ai_addr, static_cast<int>(found->ai_addrlen));
    if (!error.empty()) {
      return absl::UnavailableError(absl::StrCat("input URL \"", log_url(), "\": cannot listen on ",
                                                 settings_.host, ":", settings_.port, ": ", error));
    }
    return absl::OkStatus();
  }

  void Start() { Launch(); }

 private:
  // Creates, binds and opens listener_; an error text on failure.
  std::string ListenOn(const sockaddr* address, int length) {
    listener_ = srt_create_socket();
    if (listener_ == SRT_INVALID_SOCK) return LastError();
    std::string error;
    if (!Configure(listener_, &error)) return error;
    if (srt_bind(listener_, address, length) == SRT_ERROR) {
      return absl::StrCat("bind: ", LastError());
    }
    if (srt_listen(listener_, 1) == SRT_ERROR) return absl::StrCat("listen: ", LastError());
    return "";
  }

  void Run() override {
    if (settings_.srt_mode == SrtMode::kListener) {
      RunListener();
    } else {
      RunCaller();
    }
  }

  // Run() polls stopping() at least every kPollTimeoutMs; sleeps wake on Stop() by themselves.
  void Interrupt() override {}

  // Options set before bind/connect; an accepted socket inherits the listener's.
  bool Configure(SRTSOCKET s, std::string* error) {
    bool ok = SetInt(s, SRTO_RCVSYN, 0);  // accept/connect through epoll
    if (ok && settings_.latency_ms >= 0) ok = SetInt(s, SRTO_LATENCY, settings_.latency_ms);
    if (ok && !settings_.passphrase.empty()) {
      ok = SetInt(s, SRTO_PBKEYLEN, kKeyLengthBytes) &&
           SetString(s, SRTO_PASSPHRASE, settings_.passphrase);
    }
    if (ok && settings_.srt_mode == SrtMode::kCaller && !settings_.streamid.empty()) {
      ok = SetString(s, SRTO_STREAMID, settings_.streamid);
    }
    if (!ok) *error = absl::StrCat("set option: ", LastError());
    return ok;
  }

  void RunListener() {
    Epoll epoll;
    if (!epoll.Add(listener_, SRT_EPOLL_IN | SRT_EPOLL_ERR)) {
      log::Error("ingest_failed", {{"url", log_url()}, {"kind", "srt"}, {"error", LastError()}});
      return;
    }
    while (!stopping()) {
      int ready = epoll.Wait(kPollTimeoutMs);
      if (ready == 0) continue;
      if (ready < 0) {
        log::Warn("ingest_receive_error", {{"url", log_url()}, {"error", LastError()}});
        SleepUnlessStopped(std::chrono::milliseconds(kPollTimeoutMs));
        continue;
      }
      sockaddr_storage peer{};
      int peer_length = sizeof peer;
      SRTSOCKET s = srt_accept(listener_, reinterpret_cast<sockaddr*>(&peer), &peer_length);
      if (s == SRT_INVALID_SOCK) continue;
      const std::string peer_text =
          AddressText(reinterpret_cast<sockaddr*>(&peer), static_cast<socklen_t>(peer_length));
      if (!settings_.streamid.empty()) {
        std::string streamid(512, '\0');
        int length = static_cast<int>(streamid.size());
        if (srt_getsockflag(s, SRTO_STREAMID, streamid.data(), &length) == SRT_ERROR) length = 0;
        streamid.resize(length);
        if (streamid != settings_.streamid) {
          log::Warn("ingest_rejected", {{"url", log_url()},
                                        {"peer", peer_text},
                                        {"reason", "streamid mismatch"},
                                        {"streamid", streamid}});
          srt_close(s);
          continue;
        }
      }
      Serve(s, peer_text, &epoll);
      srt_close(s);
    }
  }

  void RunCaller() {
    Backoff backoff;
    while (!stopping()) {
      std::string reason;
      std::string peer;
      SRTSOCKET s = Connect(&peer, &reason);
      if (s != SRT_INVALID_SOCK) {
        if (Serve(s, peer, nullptr) > 0) backoff.Reset();
        srt_close(s);
        reason = "connection lost";
      }
      if (stopping()) break;
      const auto delay = backoff.Next();
      log::Info(
          "ingest_reconnect",
          {{"url", log_url()}, {"kind", "srt"}, {"reason", reason}, {"delay_ms", delay.count()}});
      SleepUnlessStopped(delay);
    }
  }

  // A connected caller socket, or SRT_INVALID_SOCK with `reason`.
  SRTSOCKET Connect(std::string* peer, std::string* reason) {
    addrinfo* found = nullptr;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICSERV;
    const std::string port = std::to_string(settings_.port);
    if (int rc = getaddrinfo(settings_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
      *reason = absl::StrCat("resolve ", settings_.host, ": ", gai_strerror(rc));
      return SRT_INVALID_SOCK;
    }
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> owned(found, freeaddrinfo);
    *peer = AddressText(found->ai_addr, found->ai_addrlen);

    SRTSOCKET s = srt_create_socket();
    if (s == SRT_INVALID_SOCK) {
      *reason = LastError();
      return SRT_INVALID_SOCK;
    }
    auto fail = [&](std::string why) {
      *reason = std::move(why);
      srt_close(s);
      return SRT_INVALID_SOCK;
    };
    if (!Configure(s, reason)) return fail(*reason);
    if (srt_connect(s, found->ai_addr, static_cast<int>(found->ai_addrlen)) == SRT_ERROR) {
      return fail(absl::StrCat("connect: ", LastError()));
    }
    Epoll epoll;
    if (!epoll.Add(s, SRT_EPOLL_OUT | SRT_EPOLL_ERR)) return fail(LastError());
    while (!stopping()) {
      int ready = epoll.Wait(kPollTimeoutMs);
      if (ready < 0) return fail(absl::StrCat("connect: ", LastError()));
      if (ready > 0) break;
    }
    if (stopping()) return fail("stopped");
    if (srt_getsockstate(s) != SRTS_CONNECTED) {
      return fail(absl::StrCat("connect: ", srt_rejectreason_str(srt_getrejectreason(s))));
    }
    return s;
  }

  // Receives from `s` until it breaks or Stop(); returns the bytes received. While serving, a
  // listener turns away other callers (`listener_epoll`), one at a time being the contract.
  uint64_t Serve(SRTSOCKET s, const std::string& peer, Epoll* listener_epoll) {
    if (!SetInt(s, SRTO_RCVSYN, 1) || !SetInt(s, SRTO_RCVTIMEO, kPollTimeoutMs)) {
      log::Warn("ingest_lost", {{"url", log_url()}, {"kind", "srt"}, {"reason", LastError()}});
      return 0;
    }
    log::Info("ingest_connected", {{"url", log_url()}, {"kind", "srt"}, {"peer", peer}});
    uint64_t received = 0;
    std::string reason;
    auto next_reject_check = Clock::now() + kRejectCheckEvery;
    auto last_payload = Clock::now();
    while (!stopping()) {
      int n =
          srt_recvmsg(s, reinterpret_cast<char*>(buffer_.data()), static_cast<int>(buffer_.size()));
      if (n > 0) {
        last_payload = Clock::now();
        received += static_cast<uint64_t>(n);
        Deliver(std::span<const uint8_t>(buffer_.data(), static_cast<size_t>(n)));
      } else if (n == SRT_ERROR) {
        int error = srt_getlasterror(nullptr);
        if (error != SRT_EASYNCRCV && error != SRT_ETIMEOUT) {
          reason = LastError();
          break;
        }
      }
      if (listener_epoll != nullptr && Clock::now() - last_payload > kSilentCallerLimit) {
        reason = "no payload for 10 s";
        break;
      }
      if (listener_epoll != nullptr && Clock::now() >= next_reject_check) {
        next_reject_check = Clock::now() + kRejectCheckEvery;
        RejectWaitingCallers(listener_epoll, peer);
      }
    }
    if (!stopping()) {
      log::Warn("ingest_lost", {{"url", log_url()},
                                {"kind", "srt"},
                                {"peer", peer},
                                {"reason", reason},
                                {"bytes", received}});
    }
    return received;
  }

  void RejectWaitingCallers(Epoll* listener_epoll, const std::string& current) {
    while (listener_epoll->Wait(0) > 0) {
      sockaddr_storage peer{};
      int peer_length = sizeof peer;
      SRTSOCKET extra = srt_accept(listener_, reinterpret_cast<sockaddr*>(&peer), &peer_length);
      if (extra == SRT_INVALID_SOCK) return;
      log::Warn("ingest_rejected", {{"url", log_url()},
                                    {"peer", AddressText(reinterpret_cast<sockaddr*>(&peer),
                                                         static_cast<socklen_t>(peer_length))},
                                    {"reason", "busy"},
                                    {"current_peer", current}});
      srt_close(extra);
    }
  }

  const SourceUrl settings_;
  SRTSOCKET listener_ = SRT_INVALID_SOCK;
  std::array<uint8_t, kPayloadBufferBytes> buffer_{};
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> StartSrtSource(std::string url, const SourceUrl& parsed,
                                                       BytesCallback on_bytes) {
  StartupSrtOnce();
  auto source = std::make_unique<SrtSource>(std::move(url), parsed, std::move(on_bytes));
  if (absl::Status status = source->Open(); !status.ok()) return status;
  source->Start();
  return source;
}

}  // namespace meshwork::ingest
