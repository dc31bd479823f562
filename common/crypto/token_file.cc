#include "common/crypto/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "common/crypto/primitives.h"
#include "common/log/log.h"

namespace meshwork::crypto {
namespace {

constexpr size_t kDigestKeyBytes = 32;
constexpr size_t kGeneratedTokenBytes = 32;

// A token file is a few lines; anything much larger is not one.
constexpr size_t kMaxFileBytes = 64 << 10;

// A line binding its token to one principal: `node=ID TOKEN`.
constexpr std::string_view kBoundPrefix = "node=";

// A node id as central accepts one: [a-z0-9][a-z0-9._-]{0,63}.
bool IsNodeId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

// This Abseil's string_view is not std::string_view, so the few string helpers are here.
std::string_view TrimWhitespace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

int64_t Nanos(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

}  // namespace

TokenFile::Identity TokenFile::IdentityOf(const struct stat& st) {
  return Identity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                  static_cast<uint64_t>(st.st_size), Nanos(st.st_mtim), Nanos(st.st_ctim)};
}

TokenFile::TokenFile(std::string path, const Clock& clock)
    : path_(std::move(path)), clock_(clock), digest_key_(RandomBytes(kDigestKeyBytes)) {}

absl::StatusOr<std::unique_ptr<TokenFile>> TokenFile::Open(std::string path, const Clock& clock) {
  std::unique_ptr<TokenFile> file(new TokenFile(std::move(path), clock));
  absl::MutexLock lock(&file->mu_);
  if (absl::Status loaded = file->LoadLocked(); !loaded.ok()) return loaded;
  file->next_check_ = clock.Monotonic() + kCheckInterval;
  return file;
}

absl::Status TokenFile::LoadLocked() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  std::string text;
  int error = 0;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    error = errno;
  } else if (static_cast<size_t>(st.st_size) > kMaxFileBytes) {
    error = EFBIG;
  } else {
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) error = errno;
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
      if (text.size() > kMaxFileBytes) {
        error = EFBIG;
        break;
      }
    }
  }
  if (fd >= 0) ::close(fd);
  if (error != 0) {
    if (loaded_once_ && !unreadable_) {
      log::Warn(
          "token_file_unreadable",
          {{"path", path_}, {"error", std::strerror(error)}, {"kept_tokens", tokens_.size()}});
    }
    unreadable_ = true;
    return absl::FailedPreconditionError(
        absl::StrCat("token file ", path_, " cannot be read: ", std::strerror(error)));
  }
  std::vector<std::string> tokens;
  std::vector<std::string> digests;
  std::vector<std::string> bound;
  std::vector<std::string> owners;  // every id a `node=` line names, with a token or not
  size_t malformed = 0, repeated = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line = TrimWhitespace(std::string_view(text).substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.front() == '#') continue;
    std::string_view principal;
    if (line.substr(0, kBoundPrefix.size()) == kBoundPrefix) {
      const size_t space = line.find_first_of(" \t");
      principal = line.substr(kBoundPrefix.size(), space - kBoundPrefix.size());
      line =
          space == std::string_view::npos ? std::string_view() : TrimWhitespace(line.substr(space));
      if (!IsNodeId(principal) || line.empty()) ++malformed;
      // A node named with no usable token still has a token of its own — none: it is then
      // refused with the cluster-wide token too (fail closed) until the line is fixed.
      if (!principal.empty()) owners.emplace_back(principal);
      if (!IsNodeId(principal) || line.empty()) continue;
    }
    const std::string digest = HmacSha256(digest_key_, line);
    if (std::find(digests.begin(), digests.end(), digest) != digests.end()) ++repeated;
    tokens.emplace_back(line);
    digests.push_back(digest);
    bound.emplace_back(principal);
  }
  if (malformed > 0 || repeated > 0) {
    log::Warn("token_file_malformed",
              {{"path", path_},
               {"bad_node_lines", malformed},
               {"repeated_tokens", repeated},
               {"expected", "node=ID TOKEN, ID [a-z0-9][a-z0-9._-]{0,63}"}});
  }
  tokens_ = std::move(tokens);
  digests_ = std::move(digests);
  bound_ = std::move(bound);
  owners_ = std::move(owners);
  identity_ = IdentityOf(st);
  unreadable_ = false;
  if ((st.st_mode & 077) != 0) {
    log::Warn("token_file_permissive",
              {{"path", path_}, {"mode", absl::StrCat(absl::Hex(st.st_mode & 0777))}});
  }
  if (tokens_.empty()) {
    log::Warn("token_file_empty", {{"path", path_}, {"effect", "every token is refused"}});
  } else {
    log::Info(loaded_once_ ? "token_file_reloaded" : "token_file_loaded",
              {{"path", path_}, {"tokens", tokens_.size()}});
  }
  loaded_once_ = true;
  return absl::OkStatus();
}

void TokenFile::RefreshLocked() {
  const auto now = clock_.Monotonic();
  if (now < next_check_) return;
  next_check_ = now + kCheckInterval;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && IdentityOf(st) == identity_ && !unreadable_) return;
  // Changed, gone or unreadable: a failed read keeps the tokens (and warns once).
  (void)LoadLocked();
}

bool TokenFile::Accepts(std::string_view presented) { return Principal(presented).has_value(); }

std::optional<std::string> TokenFile::Principal(std::string_view presented) {
  if (presented.empty()) return std::nullopt;
  const std::string digest = HmacSha256(digest_key_, presented);
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  // Every digest is compared; the last match's index is kept without a branch on it.
  size_t matched = digests_.size();
  for (size_t i = 0; i < digests_.size(); ++i) {
    const size_t equal = ConstantTimeEquals(digest, digests_[i]) ? 1 : 0;
    matched = equal * i + (1 - equal) * matched;
  }
  if (matched == digests_.size()) return std::nullopt;
  return bound_[matched];
}

bool TokenFile::HasOwnToken(std::string_view id) {
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  return !id.empty() && std::find(owners_.begin(), owners_.end(), id) != owners_.end();
}

std::string TokenFile::First() { return TokenFor(""); }

std::string TokenFile::TokenFor(std::string_view id) {
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  // A node's own token goes to central only: never to another node as the cluster's.
  if (!id.empty()) {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (bound_[i] == id) return tokens_[i];
    }
  }
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (bound_[i].empty()) return tokens_[i];
  }
  return std::string();
}

size_t TokenFile::size() {
  absl::MutexLock lock(&mu_);
  RefreshLocked();
  return tokens_.size();
}

absl::StatusOr<bool> EnsureTokenFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    return absl::InternalError(
        absl::StrCat("cannot create token file ", path, ": ", std::strerror(errno)));
  }
  const std::string line = Base64UrlEncode(RandomBytes(kGeneratedTokenBytes)) + "\n";
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return absl::InternalError(
          absl::StrCat("cannot write token file ", path, ": ", std::strerror(error)));
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!synced) {
    ::unlink(path.c_str());
    return absl::InternalError(
        absl::StrCat("cannot sync token file ", path, ": ", std::strerror(error)));
  }
  return true;
}

std::string_view BearerToken(std::string_view value) {
  constexpr std::string_view kScheme = "bearer";
  if (value.size() <= kScheme.size() || value[kScheme.size()] != ' ') return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (absl::ascii_tolower(static_cast<unsigned char>(value[i])) != kScheme[i]) return {};
  }
  return TrimWhitespace(value.substr(kScheme.size()));
}

}  // namespace meshwork::crypto
