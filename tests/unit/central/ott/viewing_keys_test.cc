// O-7 viewing keys on central: generation, rotation with overlap, persistence, the push to
// nodes and the key block of the API (which never shows a secret).
#include "central/ott/viewing_keys.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "central/cluster/config_push.h"
#include "central/store/store.h"
#include "common/time/clock.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central::ott {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

struct KeysFixture {
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<ConfigService> config;
  std::unique_ptr<ViewingKeyManager> keys;

  explicit KeysFixture(ViewingKeyOptions options = {hours(6), seconds(0)}) { Reopen(options); }
  void Reopen(ViewingKeyOptions options = {hours(6), seconds(0)}) {
    keys.reset();
    config.reset();
    store.reset();
    auto opened = OpenRocksDbStore(dir.path());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    auto loaded = ConfigService::Load(store.get());
    REQUIRE(loaded.ok());
    config = std::move(*loaded);
    keys = std::make_unique<ViewingKeyManager>(config.get(), clock, options);
  }
  ~KeysFixture() {
    keys.reset();
    config.reset();
    store.reset();
  }
  std::vector<ViewingKeyRecord> Keys() const { return config->Current()->viewing_keys; }
};

TEST_CASE("O-7 central generates the first viewing key: k1, 32 random bytes") {
  KeysFixture f;
  CHECK(f.Keys().empty());
  REQUIRE(f.keys->EnsureKey().ok());
  auto keys = f.Keys();
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].id == "k1");
  CHECK(keys[0].secret.size() == 32);
  CHECK(keys[0].secret != std::string(32, '\0'));
  CHECK(keys[0].not_after_unix_ms == 0);
  CHECK(keys[0].created_unix_ms == UnixMillis(f.clock.Now()));
  uint64_t revision = f.config->Current()->revision;
  CHECK(f.config->Current()->viewing_keys_revision == revision);

  // Already there: nothing changes, no new revision.
  REQUIRE(f.keys->EnsureKey().ok());
  REQUIRE(f.keys->Tick().ok());
  CHECK(f.config->Current()->revision == revision);
  CHECK(f.Keys() == keys);
}

TEST_CASE("O-7 rotation keeps the previous key for the overlap, then drops it") {
  KeysFixture f;
  REQUIRE(f.keys->EnsureKey().ok());
  std::string first_secret = f.Keys()[0].secret;
  f.clock.Advance(hours(1));
  auto rotated = f.keys->Rotate();
  REQUIRE(rotated.ok());
  const int64_t rotated_at = UnixMillis(f.clock.Now());
  auto keys = f.Keys();
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].id == "k2");
  CHECK(keys[0].not_after_unix_ms == 0);
  CHECK(keys[0].secret != first_secret);
  CHECK(keys[1].id == "k1");
  CHECK(keys[1].secret == first_secret);
  CHECK(keys[1].not_after_unix_ms == rotated_at + 6 * 3600 * 1000);
  CHECK(CurrentViewingKey(**rotated)->id == "k2");

  // Within the overlap both stay; a node that held revision r gets both as a delta.
  uint64_t with_both = f.config->Current()->revision;
  f.clock.Advance(hours(6) - seconds(1));
  REQUIRE(f.keys->Tick().ok());
  CHECK(f.Keys().size() == 2);
  CHECK(f.config->Current()->revision == with_both);

  // At the end of the overlap the previous one is dropped, and the nodes are told.
  f.clock.Advance(seconds(1));
  REQUIRE(f.keys->Tick().ok());
  keys = f.Keys();
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].id == "k2");
  auto config = f.config->Current();
  CHECK(config->revision == with_both + 1);
  auto delta = BuildConfigUpdate(*config, "edge-1", with_both);
  CHECK_FALSE(delta.full());
  REQUIRE(delta.has_viewing_keys());
  REQUIRE(delta.viewing_keys().keys_size() == 1);
  CHECK(delta.viewing_keys().keys(0).id() == "k2");
  CHECK(delta.viewing_keys().keys(0).not_after_unix_ms() == 0);
  CHECK(delta.viewing_keys().keys(0).secret() == keys[0].secret);
  CHECK_FALSE(delta.has_ott_groups());  // views travel on their own
  auto unchanged = BuildConfigUpdate(*config, "edge-1", config->revision);
  CHECK_FALSE(unchanged.has_viewing_keys());
}

TEST_CASE("O-7 the schedule rotates the key every rotate_every") {
  KeysFixture f({hours(6), hours(24)});
  REQUIRE(f.keys->Tick().ok());  // none yet: the first one
  REQUIRE(f.Keys().size() == 1);
  f.clock.Advance(hours(24) - seconds(1));
  REQUIRE(f.keys->Tick().ok());
  CHECK(f.Keys().size() == 1);
  f.clock.Advance(seconds(1));
  REQUIRE(f.keys->Tick().ok());
  auto keys = f.Keys();
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].id == "k2");
  CHECK(keys[1].id == "k1");
  CHECK(keys[1].not_after_unix_ms == UnixMillis(f.clock.Now()) + 6 * 3600 * 1000);
}

TEST_CASE("O-7 viewing keys survive a restart of central") {
  KeysFixture f;
  REQUIRE(f.keys->EnsureKey().ok());
  f.clock.Advance(minutes(5));
  REQUIRE(f.keys->Rotate().ok());
  auto before = f.Keys();
  uint64_t revision = f.config->Current()->viewing_keys_revision;
  f.Reopen();
  CHECK(f.Keys() == before);
  CHECK(f.config->Current()->viewing_keys_revision == revision);
  // No new key at startup when one is stored; the next id continues.
  REQUIRE(f.keys->EnsureKey().ok());
  CHECK(f.Keys() == before);
  REQUIRE(f.keys->Rotate().ok());
  CHECK(f.Keys()[0].id == "k3");
}

TEST_CASE("O-7 a full update gives every node every key it must accept") {
  KeysFixture f;
  REQUIRE(f.keys->EnsureKey().ok());
  REQUIRE(f.keys->Rotate().ok());
  auto update = BuildConfigUpdate(*f.config->Current(), "any-node", 0);
  CHECK(update.full());
  REQUIRE(update.viewing_keys().keys_size() == 2);
  CHECK(update.viewing_keys().keys(0).id() == "k2");
  CHECK(update.viewing_keys().keys(1).id() == "k1");
  CHECK(update.viewing_keys().keys(1).not_after_unix_ms() > 0);
  CHECK(update.viewing_keys().keys(0).secret().size() == 32);
  CHECK(update.has_ott_groups());  // a full update replaces the views too (none here)
}

TEST_CASE("O-19 the key block shows ids and times, never the secret") {
  KeysFixture f;
  ClusterConfig empty;
  auto none = KeyBlockJson(empty, 0, 0);
  CHECK(none["state"] == "none");
  CHECK(none["key_id"].is_null());

  REQUIRE(f.keys->EnsureKey().ok());
  REQUIRE(f.keys->Rotate().ok());
  auto config = f.config->Current();
  auto block = KeyBlockJson(*config, 2, 2);
  CHECK(block["state"] == "in_use");
  CHECK(block["key_id"] == "k2");
  CHECK(block["nodes_holding"] == "2/2");
  CHECK(block["rotated_at"] == "2023-11-14T22:13:20.000Z");
  CHECK(KeyBlockJson(*config, 1, 2)["state"] == "rotating");
  std::string text = block.dump();
  for (const auto& key : config->viewing_keys) {
    CHECK(text.find(key.secret) == std::string::npos);
    CHECK(text.find(absl::BytesToHexString(key.secret)) == std::string::npos);
    CHECK(text.find(absl::Base64Escape(key.secret)) == std::string::npos);
    CHECK(text.find(absl::WebSafeBase64Escape(key.secret)) == std::string::npos);
  }
}

TEST_CASE("O-7 R-3 rotations in a row stop at the most keys accepted at once, then resume") {
  KeysFixture f;
  REQUIRE(f.keys->EnsureKey().ok());
  for (size_t i = 1; i < ViewingKeyManager::kMaxKeys; ++i) REQUIRE(f.keys->Rotate().ok());
  CHECK(f.Keys().size() == ViewingKeyManager::kMaxKeys);
  auto refused = f.keys->Rotate();
  CHECK(absl::IsResourceExhausted(refused.status()));  // 429
  CHECK(f.Keys().size() == ViewingKeyManager::kMaxKeys);
  // Once the replaced keys' overlap ended, a rotation goes through again.
  f.clock.Advance(hours(7));
  REQUIRE(f.keys->Tick().ok());
  CHECK(f.keys->Rotate().ok());
  CHECK(f.Keys().size() == 2);
}

}  // namespace
}  // namespace meshwork::central::ott
