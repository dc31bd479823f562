#include <map>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "central/store/store.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace meshwork::central {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kConfig:
      return "config";
    case Kind::kStreamers:
      return "streamers";
    case Kind::kZones:
      return "zones";
    case Kind::kStreams:
      return "streams";
    case Kind::kOttGroups:
      return "ott_groups";
    case Kind::kVod:
      return "vod";
    case Kind::kMasks:
      return "masks";
    case Kind::kKeys:
      return "keys";
    case Kind::kAccessKeys:
      return "access_keys";
    case Kind::kRevocations:
      return "revocations";
  }
  return "unknown";
}

namespace {

constexpr char kMetaFamily[] = "meta";
constexpr char kReportsFamily[] = "reports";
constexpr char kRevisionKey[] = "revision";

std::string EncodeRevision(uint64_t r) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(r & 0xff);
    r >>= 8;
  }
  return out;
}

uint64_t DecodeRevision(std::string_view s) {
  uint64_t r = 0;
  for (char c : s) r = (r << 8) | static_cast<uint8_t>(c);
  return r;
}

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat("rocksdb ", std::string(what), ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsIOError()) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

class RocksDbStore final : public Store {
 public:
  RocksDbStore(std::unique_ptr<rocksdb::DB> db,
               std::map<std::string, rocksdb::ColumnFamilyHandle*> families, uint64_t revision)
      : db_(std::move(db)), families_(std::move(families)), revision_(revision) {}

  ~RocksDbStore() override {
    for (auto& [name, handle] : families_) db_->DestroyColumnFamilyHandle(handle);
    db_->Close();
  }

  absl::StatusOr<uint64_t> CommitIf(const std::vector<Mutation>& mutations,
                                    std::optional<uint64_t> if_revision) override {
    // Writers are serialized so revisions are dense and match the order of the log.
    absl::MutexLock lock(&write_mu_);
    if (if_revision && *if_revision != revision_.load()) {
      return absl::AbortedError(absl::StrCat("the configuration is at revision ", revision_.load(),
                                             ", not ", *if_revision, ": read it again and retry"));
    }
    rocksdb::WriteBatch batch;
    for (const Mutation& m : mutations) {
      auto* cf = Family(KindName(m.kind));
      rocksdb::Status s = m.value ? batch.Put(cf, m.key, *m.value) : batch.Delete(cf, m.key);
      if (!s.ok()) return FromRocks(s, "batch");
    }
    uint64_t next = revision_.load() + 1;
    batch.Put(Family(kMetaFamily), kRevisionKey, EncodeRevision(next));
    rocksdb::WriteOptions options;
    options.sync = true;
    rocksdb::Status s = db_->Write(options, &batch);
    if (!s.ok()) return FromRocks(s, "commit");
    revision_.store(next);
    return next;
  }

  absl::StatusOr<std::optional<std::string>> Get(Kind kind, std::string_view key) override {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), Family(KindName(kind)),
                                 rocksdb::Slice(key.data(), key.size()), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return FromRocks(s, "get");
    return std::optional<std::string>(std::move(value));
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Scan(Kind kind) override {
    return ScanFamily(Family(KindName(kind)));
  }

  uint64_t revision() const override { return revision_.load(); }

  absl::Status PutReport(std::string_view node_id, std::string_view report) override {
    rocksdb::WriteOptions options;
    options.sync = false;
    return FromRocks(
        db_->Put(options, Family(kReportsFamily), rocksdb::Slice(node_id.data(), node_id.size()),
                 rocksdb::Slice(report.data(), report.size())),
        "put report");
  }

  absl::Status DeleteReport(std::string_view node_id) override {
    return FromRocks(db_->Delete(rocksdb::WriteOptions(), Family(kReportsFamily),
                                 rocksdb::Slice(node_id.data(), node_id.size())),
                     "delete report");
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ScanReports() override {
    return ScanFamily(Family(kReportsFamily));
  }

 private:
  rocksdb::ColumnFamilyHandle* Family(std::string_view name) {
    return families_.at(std::string(name));
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ScanFamily(
      rocksdb::ColumnFamilyHandle* cf) {
    std::vector<std::pair<std::string, std::string>> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
    if (!it->status().ok()) return FromRocks(it->status(), "scan");
    return out;
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> families_;
  absl::Mutex write_mu_;
  std::atomic<uint64_t> revision_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> OpenRocksDbStore(const std::string& directory) {
  rocksdb::DBOptions options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.keep_log_file_num = 4;
  options.max_total_wal_size = 64 << 20;
  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.write_buffer_size = 4 << 20;  // small: central's data is small (P-12)

  std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName, kMetaFamily, kReportsFamily};
  for (Kind k : kAllKinds) names.emplace_back(KindName(k));
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  // every load report overwrites its node's key, and a memtable keeps each version until
  // it is flushed; a 4 MiB one filled for over an hour at four nodes' reports, which showed as
  // central's RSS growing through the soak. A small one is flushed every few minutes.
  rocksdb::ColumnFamilyOptions reports_options = cf_options;
  reports_options.write_buffer_size = 256 << 10;
  for (const auto& n : names) {
    descriptors.emplace_back(n, n == kReportsFamily ? reports_options : cf_options);
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, directory, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocks(s, absl::StrCat("open ", directory));
  std::unique_ptr<rocksdb::DB> db(raw);
  std::map<std::string, rocksdb::ColumnFamilyHandle*> families;
  for (size_t i = 0; i < names.size(); ++i) families[names[i]] = handles[i];

  std::string value;
  uint64_t revision = 0;
  s = db->Get(rocksdb::ReadOptions(), families[kMetaFamily], kRevisionKey, &value);
  if (s.ok()) {
    revision = DecodeRevision(value);
  } else if (!s.IsNotFound()) {
    for (auto& [n, h] : families) db->DestroyColumnFamilyHandle(h);
    return FromRocks(s, "read revision");
  }
  return std::unique_ptr<Store>(new RocksDbStore(std::move(db), std::move(families), revision));
}

}  // namespace meshwork::central
