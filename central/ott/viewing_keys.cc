#include "central/ott/viewing_keys.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/crypto/primitives.h"
#include "common/log/log.h"
#include "common/time/rfc3339.h"

namespace meshwork::central::ott {
namespace {

bool HasCurrent(const std::vector<ViewingKeyRecord>& keys) {
  return std::any_of(keys.begin(), keys.end(),
                     [](const ViewingKeyRecord& k) { return k.not_after_unix_ms == 0; });
}

}  // namespace

const ViewingKeyRecord* CurrentViewingKey(const ClusterConfig& config) {
  const ViewingKeyRecord* best = nullptr;
  for (const auto& key : config.viewing_keys) {
    if (key.not_after_unix_ms != 0) continue;
    if (!best || ViewingKeyNumber(key.id) > ViewingKeyNumber(best->id)) best = &key;
  }
  return best;
}

nlohmann::json KeyBlockJson(const ClusterConfig& config, size_t holding, size_t total) {
  const ViewingKeyRecord* current = CurrentViewingKey(config);
  nlohmann::json block;
  block["nodes_holding"] = absl::StrCat(holding, "/", total);
  if (!current) {
    block["state"] = "none";
    block["key_id"] = nullptr;
    block["rotated_at"] = nullptr;
    block["rotated_at_unix_ms"] = nullptr;
    block["keys"] = nlohmann::json::array();
    return block;
  }
  block["state"] = holding < total ? "rotating" : "in_use";
  block["key_id"] = current->id;
  block["rotated_at"] = Rfc3339Millis(current->created_unix_ms);
  block["rotated_at_unix_ms"] = current->created_unix_ms;
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& key : config.viewing_keys) {
    keys.push_back({{"id", key.id},
                    {"created", Rfc3339Millis(key.created_unix_ms)},
                    {"not_after", key.not_after_unix_ms == 0
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(Rfc3339Millis(key.not_after_unix_ms))}});
  }
  block["keys"] = std::move(keys);
  return block;
}

ViewingKeyManager::ViewingKeyManager(ConfigService* config, const Clock& clock,
                                     ViewingKeyOptions options)
    : config_(config), clock_(clock), options_(options) {}

ViewingKeyRecord ViewingKeyManager::NewKey(const std::vector<ViewingKeyRecord>& existing,
                                           int64_t now_ms) const {
  uint64_t highest = 0;
  for (const auto& k : existing) highest = std::max(highest, ViewingKeyNumber(k.id));
  ViewingKeyRecord key;
  key.id = absl::StrCat("k", highest + 1);
  key.secret = crypto::RandomBytes(kViewingKeyBytes);  // aborts if the CSPRNG fails
  key.created_unix_ms = now_ms;
  key.not_after_unix_ms = 0;
  return key;
}

absl::Status ViewingKeyManager::EnsureKey() {
  auto result = config_->UpdateViewingKeys(
      [this](const ClusterConfig& current) -> std::optional<std::vector<ViewingKeyRecord>> {
        if (HasCurrent(current.viewing_keys)) return std::nullopt;
        std::vector<ViewingKeyRecord> keys = current.viewing_keys;
        keys.push_back(NewKey(keys, UnixMillis(clock_.Now())));
        return keys;
      });
  return result.status();
}

absl::StatusOr<std::shared_ptr<const ClusterConfig>> ViewingKeyManager::Rotate() {
  size_t accepted = 0;  // set by the decision, which runs under the config's write lock
  auto rotated = config_->UpdateViewingKeys(
      [this,
       &accepted](const ClusterConfig& current) -> std::optional<std::vector<ViewingKeyRecord>> {
        const int64_t now = UnixMillis(clock_.Now());
        const int64_t overlap_ms = options_.overlap.count() * 1000;
        std::vector<ViewingKeyRecord> keys;
        for (const auto& key : current.viewing_keys) {
          ViewingKeyRecord kept = key;
          if (kept.not_after_unix_ms == 0) kept.not_after_unix_ms = now + overlap_ms;
          if (kept.not_after_unix_ms > now) keys.push_back(std::move(kept));
        }
        accepted = keys.size();
        if (accepted >= kMaxKeys) return std::nullopt;  // refused below
        keys.push_back(NewKey(current.viewing_keys, now));
        return keys;
      });
  if (rotated.ok() && accepted >= kMaxKeys) {
    return absl::ResourceExhaustedError(
        absl::StrCat(accepted,
                     " viewing keys are accepted already (the current one and those in their "
                     "rotation overlap); rotate again when the oldest overlap ends"));
  }
  return rotated;
}

absl::Status ViewingKeyManager::Tick() {
  auto result = config_->UpdateViewingKeys(
      [this](const ClusterConfig& current) -> std::optional<std::vector<ViewingKeyRecord>> {
        const int64_t now = UnixMillis(clock_.Now());
        std::vector<ViewingKeyRecord> keys;
        bool changed = false;
        for (const auto& key : current.viewing_keys) {
          if (key.not_after_unix_ms != 0 && key.not_after_unix_ms <= now) {
            changed = true;  // its overlap has ended
            continue;
          }
          keys.push_back(key);
        }
        const ViewingKeyRecord* signing = CurrentViewingKey(current);
        const int64_t period_ms = options_.rotate_every.count() * 1000;
        if (!signing) {
          keys.push_back(NewKey(current.viewing_keys, now));
          changed = true;
        } else if (period_ms > 0 && now - signing->created_unix_ms >= period_ms) {
          const int64_t overlap_ms = options_.overlap.count() * 1000;
          for (auto& key : keys) {
            if (key.not_after_unix_ms == 0) key.not_after_unix_ms = now + overlap_ms;
          }
          std::erase_if(keys, [now](const ViewingKeyRecord& k) {
            return k.not_after_unix_ms != 0 && k.not_after_unix_ms <= now;
          });
          keys.push_back(NewKey(current.viewing_keys, now));
          changed = true;
          log::Info("viewing_key_rotation_due", {{"key_id", signing->id}});
        }
        if (!changed) return std::nullopt;
        return keys;
      });
  return result.status();
}

}  // namespace meshwork::central::ott
