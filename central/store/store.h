// Central's durable storage (C-6, C-10). One interface, two implementations: RocksDB embedded
// (the default, one central) and etcd (several centrals sharing one configuration,
// central/etcd/etcd_store.h).
//
// Every configuration write goes through Commit(): all its mutations apply atomically, are
// durable (RocksDB: WAL fsync; etcd: committed by a quorum) when it returns OK, and advance
// the store-wide revision by exactly one. Load reports are kept separately and unsynced:
// losing the last few on a crash is fine, they are replaced every second.
//
// With several writers (etcd), a write based on an old revision is refused: CommitIf() with
// the revision the caller read is Aborted when another writer committed since, and the
// change listener tells each instance that the configuration moved under it.
//
// Implementations are safe for concurrent use from several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace meshwork::central {

// The kinds of object central stores; each is a column family of its own.
enum class Kind {
  kConfig,
  kStreamers,
  kZones,
  kStreams,
  kOttGroups,
  kVod,
  kMasks,
  kKeys,
  kAccessKeys,
  kRevocations
};
inline constexpr Kind kAllKinds[] = {
    Kind::kConfig, Kind::kStreamers, Kind::kZones, Kind::kStreams,    Kind::kOttGroups,
    Kind::kVod,    Kind::kMasks,     Kind::kKeys,  Kind::kAccessKeys, Kind::kRevocations};
std::string_view KindName(Kind kind);  // "config", "streamers", ...

struct Mutation {
  Kind kind;
  std::string key;
  std::optional<std::string> value;  // nullopt deletes the key
};

class Store {
 public:
  virtual ~Store() = default;

  // Applies `mutations` atomically and durably; returns the new revision (previous + 1).
  // When `if_revision` is set and the store is not at that revision (another writer got
  // there first), Aborted. On error nothing is applied and the revision is unchanged.
  virtual absl::StatusOr<uint64_t> CommitIf(const std::vector<Mutation>& mutations,
                                            std::optional<uint64_t> if_revision) = 0;
  absl::StatusOr<uint64_t> Commit(const std::vector<Mutation>& mutations) {
    return CommitIf(mutations, std::nullopt);
  }

  // The value under (kind, key), or nullopt when absent.
  virtual absl::StatusOr<std::optional<std::string>> Get(Kind kind, std::string_view key) = 0;

  // Every (key, value) of one kind, sorted by key.
  virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Scan(Kind kind) = 0;

  // The revision of the last successful Commit (0 for a new store).
  virtual uint64_t revision() const = 0;

  // Latest load report of a node, written without sync: shared with the other centrals of a
  // shared store (etcd, C-10), which follow them through the report listener. Not read back
  // at start: a central's own nodes report again within a second of reattaching.
  virtual absl::Status PutReport(std::string_view node_id, std::string_view report) = 0;
  virtual absl::Status DeleteReport(std::string_view node_id) = 0;
  virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ScanReports() = 0;

  // Another writer changed the configuration: called with the new revision, on a thread of
  // the store's own, after Get()/Scan()/revision() show the change. A store with one writer
  // never calls it. Replacing it (nullptr: none) waits for a call in progress.
  using ChangeListener = std::function<void(uint64_t revision)>;
  virtual void SetChangeListener(ChangeListener listener) {}
  // A report written by any writer changed (nullopt: deleted or expired), on the store's own
  // thread. Only shared stores (etcd) call it. Replacing it waits likewise.
  using ReportListener =
      std::function<void(const std::string& node_id, const std::optional<std::string>& value)>;
  virtual void SetReportListener(ReportListener listener) {}
};

// Opens (creating if needed) a RocksDB store in `directory`.
absl::StatusOr<std::unique_ptr<Store>> OpenRocksDbStore(const std::string& directory);

}  // namespace meshwork::central
