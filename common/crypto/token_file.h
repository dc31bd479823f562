// Bearer tokens kept in a file (M-3): the cluster token of the control channel and the admin
// API token.
//
// The file holds one token per line; blank lines and lines starting with '#' are ignored,
// and whitespace around a token is not part of it. A line `node=ID TOKEN` binds its token to
// one principal (the control channel: a node's own token, accepted for node ID alone — see
// Principal and HasOwnToken); a plain line is good for any. Every listed token is accepted, so a
// token is rotated without a restart: add the new line, move the clients over, drop the old
// line. The file is looked at again at most once a second (by the injected clock) and read
// again when its identity, size, modification or change time differ from the last read.
//
// What never leaves the process: the tokens. Logs name the path and the number of tokens,
// never a token; nothing here is exported as a metric.
#ifndef MESHWORK_COMMON_CRYPTO_TOKEN_FILE_H_
#define MESHWORK_COMMON_CRYPTO_TOKEN_FILE_H_

#include <sys/stat.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/time/clock.h"

namespace meshwork::crypto {

class TokenFile {
 public:
  // How long a look at the file is trusted before the next stat().
  static constexpr std::chrono::seconds kCheckInterval{1};

  // Reads `path` once. Fails (FailedPrecondition, naming the path) when it cannot be read at
  // all, so a misspelt flag stops the binary at startup; a readable file without tokens is
  // accepted (it then accepts nothing) and logged as a warning. `clock` must outlive the
  // object.
  static absl::StatusOr<std::unique_ptr<TokenFile>> Open(std::string path, const Clock& clock);

  // True when `presented` equals one of the file's current tokens. Never true for an empty
  // `presented` or when the file lists no token. Each comparison is of two HMAC-SHA256
  // digests under a per-process random key (ConstantTimeEquals), and every token is compared,
  // so the time taken depends neither on the presented bytes nor on which token matched.
  // Thread-safe. At most once per kCheckInterval a caller stat()s the file (and reads it when
  // it changed) under the object's mutex: a few microseconds of file I/O, so it is fine on
  // an HTTP worker or a gRPC reaction. A file that became unreadable leaves the previous
  // tokens in force and logs a warning (once per change of state).
  bool Accepts(std::string_view presented);

  // Like Accepts, and who the token speaks for: nullopt when refused, "" for a plain line's
  // token, the ID of a `node=ID` line's. Same constant-time comparison of every token.
  std::optional<std::string> Principal(std::string_view presented);

  // Whether a `node=ID` line names `id` (even one without a usable token: fail closed): that
  // principal is then only accepted with its own token. Thread-safe; refreshed like Accepts.
  bool HasOwnToken(std::string_view id);

  // The first plain token of the file, or "" when there is none: what a client sends (a
  // node's own token is never sent to other nodes). Refreshed like Accepts. Thread-safe.
  std::string First();
  // The token of a `node=ID` line for `id` when there is one, else First(): what node `id`
  // presents to central. Thread-safe.
  std::string TokenFor(std::string_view id);

  // Number of tokens currently in force (for logs and tests). Thread-safe.
  size_t size();

  const std::string& path() const { return path_; }

 private:
  struct Identity {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const Identity&) const = default;
  };

  TokenFile(std::string path, const Clock& clock);
  // Re-reads the file if kCheckInterval has passed since the last look and it changed.
  void RefreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the file. When it cannot be read (or is over 64 KiB) the tokens stay as they were,
  // a warning is logged if the previous read had worked, and the error comes back.
  absl::Status LoadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static Identity IdentityOf(const struct stat& st);

  const std::string path_;
  const Clock& clock_;
  const std::string digest_key_;  // random, per process: the HMAC key of the comparisons

  absl::Mutex mu_;
  std::vector<std::string> tokens_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> digests_ ABSL_GUARDED_BY(mu_);  // HMAC of each token
  std::vector<std::string> bound_ ABSL_GUARDED_BY(mu_);    // each token's principal ("": any)
  std::vector<std::string> owners_ ABSL_GUARDED_BY(mu_);   // ids of every `node=` line
  Identity identity_ ABSL_GUARDED_BY(mu_);
  bool loaded_once_ ABSL_GUARDED_BY(mu_) = false;
  bool unreadable_ ABSL_GUARDED_BY(mu_) = false;  // the last attempt failed (warned)
  std::chrono::steady_clock::time_point next_check_ ABSL_GUARDED_BY(mu_);
};

// Makes sure `path` holds a token: when the file does not exist, creates it (mode 0600,
// O_EXCL) with one random token (32 bytes from the CSPRNG, base64url) and a final newline,
// and fsyncs it. Returns true when it created the file, false when one was already there.
// Errors: the file cannot be created or written (Internal, naming the path). The token is
// never logged.
absl::StatusOr<bool> EnsureTokenFile(const std::string& path);

// The token of an `Authorization: Bearer <token>` value (RFC 6750: scheme case-insensitive,
// one or more spaces), or "" when `value` is not one.
std::string_view BearerToken(std::string_view value);

}  // namespace meshwork::crypto

#endif  // MESHWORK_COMMON_CRYPTO_TOKEN_FILE_H_
