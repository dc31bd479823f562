#include "common/crypto/token_file.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/crypto/base64url.h"
#include "common/time/clock.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::crypto {
namespace {

void Write(const std::filesystem::path& path, const std::string& text) {
  // Written to a new file and renamed over the old one, as an operator's editor or a
  // configuration tool does: the file changes identity, whatever its size and times.
  const auto next = path.string() + ".next";
  {
    std::ofstream out(next, std::ios::binary | std::ios::trunc);
    out << text;
  }
  std::filesystem::rename(next, path);
}

std::unique_ptr<TokenFile> OpenOrFail(const std::filesystem::path& path, const Clock& clock) {
  auto file = TokenFile::Open(path.string(), clock);
  REQUIRE(file.ok());
  return *std::move(file);
}

TEST_CASE("M-3 a token file accepts each listed token and nothing else") {
  TempDir dir;
  const auto path = dir.path() / "tokens";
  Write(path, "# rotated 2026-01-01\n  alpha-token \r\n\n\tbeta_token\n");
  FakeClock clock;
  auto tokens = OpenOrFail(path, clock);
  CHECK(tokens->size() == 2);
  CHECK(tokens->Accepts("alpha-token"));
  CHECK(tokens->Accepts("beta_token"));
  CHECK(tokens->First() == "alpha-token");
  CHECK_FALSE(tokens->Accepts(""));
  CHECK_FALSE(tokens->Accepts("alpha"));         // a prefix
  CHECK_FALSE(tokens->Accepts("alpha-token "));  // whitespace is not trimmed from the caller
  CHECK_FALSE(tokens->Accepts("alpha-tokenX"));  // an extension
  CHECK_FALSE(tokens->Accepts("# rotated 2026-01-01"));  // comments are not tokens
  CHECK_FALSE(tokens->Accepts("ALPHA-TOKEN"));
}

TEST_CASE("M-3 a node=ID line binds its token to that node, a plain line to any") {
  TempDir dir;
  const auto path = dir.path() / "tokens";
  Write(path,
        "# cluster-wide first, then two nodes' own\n"
        "cluster-secret\n"
        "node=edge-1 edge-1-secret\n"
        "node=edge-2\tedge-2-secret \n"
        "node=edge-3\n"               // no token: never an empty token, and edge-3 closed
        "node=Edge-4 upper-secret\n"  // not a node id: ignored, Edge-4 closed too
        "node= orphan-secret\n");     // no id: ignored
  FakeClock clock;
  auto file = OpenOrFail(path, clock);
  CHECK(file->size() == 3);
  CHECK(file->Principal("cluster-secret") == std::string());
  CHECK(file->Principal("edge-1-secret") == std::string("edge-1"));
  CHECK(file->Principal("edge-2-secret") == std::string("edge-2"));
  CHECK_FALSE(file->Principal("node=edge-1 edge-1-secret"));
  CHECK_FALSE(file->Principal("orphan-secret"));
  CHECK_FALSE(file->Principal(""));
  CHECK_FALSE(file->Principal("edge-3"));
  CHECK_FALSE(file->Principal("upper-secret"));
  CHECK(file->Accepts("edge-1-secret"));
  CHECK(file->HasOwnToken("edge-1"));
  CHECK(file->HasOwnToken("edge-2"));
  CHECK(file->HasOwnToken("edge-3"));  // its line is broken: no token registers it
  CHECK(file->HasOwnToken("Edge-4"));
  CHECK_FALSE(file->HasOwnToken("edge-9"));
  CHECK_FALSE(file->HasOwnToken(""));
  // What a client sends: its own token to central, the cluster's to everyone else.
  CHECK(file->TokenFor("edge-1") == "edge-1-secret");
  CHECK(file->TokenFor("edge-9") == "cluster-secret");
  CHECK(file->First() == "cluster-secret");
  // A file with only a node's own line: that token goes to central, never to other nodes.
  Write(path, "node=edge-1 only-mine\n");
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(file->First().empty());
  CHECK(file->TokenFor("edge-2").empty());
  CHECK(file->TokenFor("edge-1") == "only-mine");
  CHECK_FALSE(file->Principal("edge-1-secret"));
}

TEST_CASE("M-3 a token is rotated in the file without a restart") {
  TempDir dir;
  const auto path = dir.path() / "tokens";
  Write(path, "old\n");
  FakeClock clock;
  auto tokens = OpenOrFail(path, clock);
  REQUIRE(tokens->Accepts("old"));

  // Step 1: the new token is added next to the old one. Within the check interval the file
  // is not looked at again.
  Write(path, "old\nnew\n");
  CHECK_FALSE(tokens->Accepts("new"));
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->Accepts("new"));
  CHECK(tokens->Accepts("old"));
  CHECK(tokens->First() == "old");

  // Step 2: clients moved; the old line is dropped.
  Write(path, "new\n");
  clock.Advance(TokenFile::kCheckInterval);
  CHECK_FALSE(tokens->Accepts("old"));
  CHECK(tokens->Accepts("new"));
  CHECK(tokens->First() == "new");
}

TEST_CASE("M-3 a token file that becomes unreadable keeps the previous tokens") {
  TempDir dir;
  const auto path = dir.path() / "tokens";
  Write(path, "kept\n");
  FakeClock clock;
  auto tokens = OpenOrFail(path, clock);

  std::filesystem::remove(path);
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->Accepts("kept"));
  CHECK(tokens->First() == "kept");

  // A directory in its place cannot be read either.
  std::filesystem::create_directory(path);
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->Accepts("kept"));
  std::filesystem::remove(path);

  // Once the file is back, it is what counts.
  Write(path, "fresh\n");
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->Accepts("fresh"));
  CHECK_FALSE(tokens->Accepts("kept"));
}

TEST_CASE("M-3 an empty token file accepts nothing") {
  TempDir dir;
  const auto path = dir.path() / "tokens";
  Write(path, "\n  \n# no token yet\n");
  FakeClock clock;
  auto tokens = OpenOrFail(path, clock);
  CHECK(tokens->size() == 0);
  CHECK(tokens->First().empty());
  CHECK_FALSE(tokens->Accepts(""));
  CHECK_FALSE(tokens->Accepts("anything"));
  CHECK_FALSE(tokens->Accepts("# no token yet"));

  Write(path, "now-one\n");
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->Accepts("now-one"));
}

TEST_CASE("M-3 a token file that cannot be read at startup is an error naming it") {
  TempDir dir;
  FakeClock clock;
  auto missing = TokenFile::Open((dir.path() / "absent").string(), clock);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(missing.status().message().find("absent") != std::string_view::npos);
  auto directory = TokenFile::Open(dir.path().string(), clock);
  CHECK_FALSE(directory.ok());
}

TEST_CASE("M-3 EnsureTokenFile creates a private random token once") {
  TempDir dir;
  const auto path = (dir.path() / "cluster-token").string();
  auto created = EnsureTokenFile(path);
  REQUIRE(created.ok());
  CHECK(*created);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  FakeClock clock;
  auto tokens = OpenOrFail(path, clock);
  const std::string token = tokens->First();
  CHECK(token.size() == 43);  // 32 bytes, base64url without padding
  auto bytes = Base64UrlDecode(token);
  REQUIRE(bytes.has_value());
  CHECK(bytes->size() == 32);

  // A second start finds it and leaves it alone.
  auto again = EnsureTokenFile(path);
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
  clock.Advance(TokenFile::kCheckInterval);
  CHECK(tokens->First() == token);

  // Another file gets another token.
  const auto other = (dir.path() / "other-token").string();
  REQUIRE(EnsureTokenFile(other).ok());
  CHECK(OpenOrFail(other, clock)->First() != token);

  CHECK_FALSE(EnsureTokenFile((dir.path() / "no-such-dir" / "token").string()).ok());
}

TEST_CASE("M-3 BearerToken reads an Authorization header value") {
  CHECK(BearerToken("Bearer abc") == "abc");
  CHECK(BearerToken("bearer   abc ") == "abc");
  CHECK(BearerToken("BEARER abc") == "abc");
  CHECK(BearerToken("Bearer") == "");
  CHECK(BearerToken("Bearer ") == "");
  CHECK(BearerToken("Bearerabc") == "");
  CHECK(BearerToken("Basic YWJjOmRlZg==") == "");
  CHECK(BearerToken("") == "");
}

}  // namespace
}  // namespace meshwork::crypto
