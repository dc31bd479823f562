#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "central/store/store.h"
#include "tests/store_contract.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

// The store contract against RocksDB: each backend is one store in a temporary directory,
// reopened in place.
class RocksDbBackend {
 public:
  std::unique_ptr<Store> Open() {
    auto store = OpenRocksDbStore(dir_.path());
    INFO(store.status().ToString());
    REQUIRE(store.ok());
    return std::move(*store);
  }

 private:
  TempDir dir_;
};

MESHWORK_STORE_CONTRACT("C-6 RocksDB: ", RocksDbBackend)

TEST_CASE("C-6 kind names are the documented column family names") {
  CHECK(KindName(Kind::kConfig) == "config");
  CHECK(KindName(Kind::kStreamers) == "streamers");
  CHECK(KindName(Kind::kZones) == "zones");
  CHECK(KindName(Kind::kStreams) == "streams");
  CHECK(KindName(Kind::kOttGroups) == "ott_groups");
  CHECK(KindName(Kind::kVod) == "vod");
  CHECK(KindName(Kind::kMasks) == "masks");
  CHECK(KindName(Kind::kKeys) == "keys");
}

}  // namespace
}  // namespace meshwork::central
