// Central's configuration: the validated objects, their durable writes and the immutable
// snapshot everyone else reads.
//
// Writes are serialized, validated, committed to the Store (synced) and only then made
// visible by swapping the snapshot; a rejected write changes nothing. Writes block on disk:
// call them from a blocking pool, never from an HTTP worker or a gRPC reactor. Current() is
// cheap and lock-free for readers in practice (a shared_ptr copy).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "central/store/store.h"
#include "common/net/cidr.h"
#include "common/sync/snapshot.h"
#include "meshwork/v1/types.pb.h"
#include "nlohmann/json.hpp"

namespace meshwork::central {

struct StreamerRecord {
  nlohmann::json object;  // canonical REST form, without status
  meshwork::v1::StreamerSettings settings;
  uint64_t revision = 0;  // the revision at which this streamer last changed
};

// A zone, stream or VOD asset: its canonical REST form and the revision at which it last
// changed.
struct ObjectRecord {
  nlohmann::json object;
  uint64_t revision = 0;
};
using ObjectMap = std::map<std::string, ObjectRecord>;

// kAccessKey: viewer token keys by kid (access_keys.h); their canonical form holds the
// secret, so the API shows them through AccessKeyPublicJson only.
// kRevocation: a login every node refuses until `until_unix_s` (access_keys.h).
enum class ObjectKind { kZone, kStream, kVod, kAccessKey, kRevocation };

// O-7: a viewing key of the cluster. The secret is never logged nor shown by the API.
struct ViewingKeyRecord {
  std::string id;      // "k1", "k2", …
  std::string secret;  // raw bytes
  int64_t created_unix_ms = 0;
  int64_t not_after_unix_ms = 0;  // 0: the current key; else the end of its rotation overlap
  bool operator==(const ViewingKeyRecord&) const = default;
};

// A viewing key id's number: "k12" → 12, 0 for an id not of that form. Keys are numbered in
// the order they were made, so the highest number is the newest.
uint64_t ViewingKeyNumber(const std::string& id);

// One immutable view of the whole configuration.
struct ClusterConfig {
  uint64_t revision = 0;
  std::vector<std::string> trusted_proxies;  // canonical CIDR strings
  std::shared_ptr<const net::CidrSet> trusted_set = std::make_shared<const net::CidrSet>();
  uint64_t trusted_proxies_revision = 0;
  // CS-1: the cluster-wide content steering default (a canonical "steering" member, see
  // steering_config.h), for streams without their own; null: none.
  nlohmann::json steering;
  std::map<std::string, StreamerRecord> streamers;  // by id
  ObjectMap zones;                                  // by name
  ObjectMap streams;                                // by name
  ObjectMap vod;                                    // by name
  ObjectMap access_keys;                            // by kid
  ObjectMap revocations;                            // by login
  uint64_t zones_revision = 0;                      // last change to any zone
  uint64_t streams_revision = 0;      // last change to any stream (placement included)
  uint64_t access_keys_revision = 0;  // last change to the access key set (a deletion too)
  uint64_t revocations_revision = 0;  // last change to the revoked logins
  // O-7: the keys nodes must accept, the current one first, then older ones (newest first).
  std::vector<ViewingKeyRecord> viewing_keys;
  uint64_t viewing_keys_revision = 0;  // last change to the key set

  const ObjectMap& Objects(ObjectKind kind) const;
};

namespace config_internal {
// C-10, after a catch-up: the section revisions of `after` (read back from the store) moved
// past `before`'s wherever a section changed, deletions included (ReadAll dates a section by
// its newest surviving object).
void KeepSectionRevisions(const ClusterConfig& before, ClusterConfig& after);
}  // namespace config_internal

class ConfigService {
 public:
  // Reads everything from `store` (which must outlive the service). With a shared store
  // (etcd, C-10) the service follows other centrals' commits: the snapshot is read again
  // and published (listeners called on the store's thread) when the store's revision moves,
  // and each write first catches up, then commits only if no other central committed
  // since (else Aborted, HTTP 409: the caller retries against the new state).
  static absl::StatusOr<std::unique_ptr<ConfigService>> Load(Store* store);
  ~ConfigService();

  std::shared_ptr<const ClusterConfig> Current() const { return snapshot_.Get(); }
  // The same for a hot reader, through its own cache (Snapshot::Read).
  const ClusterConfig* Read(Snapshot<ClusterConfig>::ReadCache& cache) const {
    return snapshot_.Read(cache);
  }

  // Called after every successful change with the new snapshot, on the writer's thread.
  // kNow: also called at once with the current snapshot, with no change in between that
  // reaches neither call (another central's change caught up meanwhile, C-10).
  enum class From { kNextChange, kNow };
  void Subscribe(std::function<void(std::shared_ptr<const ClusterConfig>)> listener,
                 From from = From::kNextChange);

  // GET /config body.
  static nlohmann::json ConfigJson(const ClusterConfig& config);

  // PATCH /config (T-5, T-7). Returns the new snapshot.
  absl::StatusOr<std::shared_ptr<const ClusterConfig>> PatchConfig(const nlohmann::json& patch);

  struct PutResult {
    bool created = false;
    nlohmann::json object;
  };
  absl::StatusOr<PutResult> PutStreamer(const std::string& id, const nlohmann::json& body);
  absl::StatusOr<nlohmann::json> PatchStreamer(const std::string& id, const nlohmann::json& patch);
  absl::Status DeleteStreamer(const std::string& id);
  // Zones, streams and VOD assets: the same contract as the streamer calls. A zone route
  // already owned by another zone is AlreadyExists naming `routes[i]` and the owner (Z-3).
  absl::StatusOr<PutResult> PutObject(ObjectKind kind, const std::string& name,
                                      const nlohmann::json& body);
  absl::StatusOr<nlohmann::json> PatchObject(ObjectKind kind, const std::string& name,
                                             const nlohmann::json& patch);
  absl::Status DeleteObject(ObjectKind kind, const std::string& name);
  // One atomic read-modify-write of an existing object: `edit` changes a copy of the stored
  // canonical object; the result is validated again and committed as one synced write with a
  // new revision (none when nothing changed). An error from `edit` or the validation writes
  // nothing. NotFound when the object does not exist. Returns the stored object.
  // Streams: this is how the server-managed members (masks, version, range_versions) change.
  absl::StatusOr<nlohmann::json> MutateObject(
      ObjectKind kind, const std::string& name,
      const std::function<absl::Status(nlohmann::json& object)>& edit);

  // O-7: one atomic change of the viewing key set. `decide` sees the current configuration
  // (under the write lock) and returns the new key set, or nullopt for "no change". The new
  // set is committed (synced) with a new revision and published; keys absent from it are
  // deleted from the store. Returns the configuration after the change.
  absl::StatusOr<std::shared_ptr<const ClusterConfig>> UpdateViewingKeys(
      const std::function<std::optional<std::vector<ViewingKeyRecord>>(const ClusterConfig&)>&
          decide);

  // C-9: called under the write lock with every stream about to be committed by PutObject,
  // PatchObject or MutateObject (validated, its placement zone known) and the configuration
  // it is written into; it may change the stream's placement.streamers (central/cluster/
  // placer.h). It must not call back into this service. Set before writes start.
  using StreamFiller = std::function<void(const ClusterConfig& current, const std::string& name,
                                          nlohmann::json& stream)>;
  void SetStreamFiller(StreamFiller filler) { stream_filler_ = std::move(filler); }

  // Registration of a node central has not seen: creates it with its reported hostname and
  // role. A known node is left as the operator configured it. Returns true when created.
  absl::StatusOr<bool> EnsureStreamer(const std::string& id, const std::string& hostname,
                                      meshwork::v1::Role role);

 private:
  explicit ConfigService(Store* store) : store_(store) {}
  // The whole configuration as stored; DataLoss for an unreadable envelope or a JSON type
  // error (never throws). Object rows failing their own validation are left out (logged).
  static absl::StatusOr<std::shared_ptr<ClusterConfig>> ReadAll(Store* store);
  static absl::StatusOr<std::shared_ptr<ClusterConfig>> ReadAllUnchecked(Store* store);
  // A stored object through its kind's validation (no cross-object checks): its canonical
  // form, or why it is not one.
  static absl::StatusOr<nlohmann::json> ValidateStored(ObjectKind kind, const nlohmann::json& value,
                                                       const std::string& name);
  // Reads the store again when it moved past the snapshot, and publishes the result.
  void CatchUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // C-10: another central's write, heard by the store's watch thread, is caught up with
  // without ever blocking that thread on write_mu_ (a writer holding it may be waiting for
  // that very thread to deliver the next revision): the listener sets catch_up_pending_ and
  // catches up only if the lock is free; every holder calls this after releasing it.
  void CatchUpPending() ABSL_LOCKS_EXCLUDED(write_mu_);
  // Runs one write under write_mu_ from a caught-up snapshot and returns its result. Another
  // central may commit between the catch-up and this one's commit (C-10: its write reaches
  // this central's mirror through the watch, a little later); the write is then computed
  // again from the newer snapshot, a bounded number of times, so a caller never gets a
  // conflict it did not ask for: no write of this API is conditional on a revision.
  template <typename Fn>
  auto Write(Fn&& fn) -> decltype(fn());
  // Store::CommitIf at the snapshot's revision; catches up when another writer was first.
  absl::StatusOr<uint64_t> CommitLocked(const std::vector<Mutation>& mutations)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::StatusOr<std::shared_ptr<const ClusterConfig>> CommitStreamer(
      const std::string& id, const nlohmann::json& canonical)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void Publish(std::shared_ptr<const ClusterConfig> next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::StatusOr<nlohmann::json> ValidateObject(ObjectKind kind, const nlohmann::json& body,
                                                const std::string& name,
                                                const ClusterConfig& current) const;
  absl::StatusOr<std::shared_ptr<const ClusterConfig>> CommitObject(
      ObjectKind kind, const std::string& name, std::optional<nlohmann::json> canonical)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  Store* store_;
  absl::Mutex write_mu_;
  std::atomic<bool> catch_up_pending_{false};
  StreamFiller stream_filler_;  // set before writes start, then only read
  Snapshot<ClusterConfig> snapshot_;
  std::vector<std::function<void(std::shared_ptr<const ClusterConfig>)>> listeners_
      ABSL_GUARDED_BY(write_mu_);
};

}  // namespace meshwork::central
