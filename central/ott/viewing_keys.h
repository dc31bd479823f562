// O-7: the cluster's viewing keys. Central generates them (32 random bytes each), stores them
// in the configuration (RocksDB, synced, so a restart keeps them) and pushes them to every
// node as ConfigUpdate.viewing_keys; the newest key signs, older ones are still accepted for
// the rotation overlap and then dropped.
//
// The secret never leaves this module except in the ConfigUpdate to nodes: no log line,
// metric or API answer carries it, only key ids.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "central/model/config_service.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"

namespace meshwork::central::ott {

inline constexpr size_t kViewingKeyBytes = 32;

struct ViewingKeyOptions {
  // How long a replaced key is still accepted: the pass lifetime (O-7, 6 h).
  std::chrono::seconds overlap{6 * 3600};
  // Scheduled rotation period; 0 = never.
  std::chrono::seconds rotate_every{86400};
};

// The current (signing) key of `config`, or nullptr when there is none.
const ViewingKeyRecord* CurrentViewingKey(const ClusterConfig& config);

// The key block of `GET /central/api-v4/ott-key` (O-19): {"state", "key_id", "rotated_at",
// "rotated_at_unix_ms", "nodes_holding": "n/N", "keys": [{"id", "not_after"}]}. `holding` of
// `total` nodes hold the current key. state: "none" without a key, "rotating" while
// holding < total, else "in_use". Ids and times only.
nlohmann::json KeyBlockJson(const ClusterConfig& config, size_t holding, size_t total);

// Generation, rotation and expiry of the keys, through ConfigService (each change is one
// synced commit with a new revision, which is what pushes it to the nodes). Thread-safe:
// ConfigService serializes the changes.
class ViewingKeyManager {
 public:
  ViewingKeyManager(ConfigService* config, const Clock& clock, ViewingKeyOptions options = {});

  // Creates the first key ("k1") when the configuration holds none.
  absl::Status EnsureKey();
  // A new current key now; the replaced one stays accepted for `overlap`. Returns the
  // configuration holding the new key; ResourceExhausted (429) when kMaxKeys are accepted
  // already (every rotation keeps the replaced key for the overlap and sends the whole set
  // to every node: a script looping on rotate must not grow it without end).
  absl::StatusOr<std::shared_ptr<const ClusterConfig>> Rotate();
  static constexpr size_t kMaxKeys = 8;
  // The schedule: creates a key when none exists, rotates when the current one is older
  // than `rotate_every`, drops replaced keys whose overlap has ended.
  absl::Status Tick();

  const ViewingKeyOptions& options() const { return options_; }

 private:
  ViewingKeyRecord NewKey(const std::vector<ViewingKeyRecord>& existing, int64_t now_ms) const;

  ConfigService* config_;
  const Clock& clock_;
  const ViewingKeyOptions options_;
};

}  // namespace meshwork::central::ott
