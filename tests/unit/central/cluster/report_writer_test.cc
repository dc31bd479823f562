// C-4: nodes' reports reach the store from the ReportWriter's own thread (never the gRPC
// reactor's), newest per node, and nothing queued is lost at shutdown.
#include "central/cluster/report_writer.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "tests/unit/temp_dir.h"

namespace meshwork::central {
namespace {

std::map<std::string, std::string> Reports(Store& store) {
  auto scanned = store.ScanReports();
  REQUIRE(scanned.ok());
  return {scanned->begin(), scanned->end()};
}

TEST_CASE("C-4 reports are written by the report writer, the newest per node") {
  TempDir dir;
  auto store = OpenRocksDbStore(dir.path());
  REQUIRE(store.ok());
  {
    ReportWriter writer(store->get());
    writer.Put("edge-1", "r1");
    writer.Put("edge-1", "r2");
    writer.Put("edge-2", "s1");
    writer.Flush();
    auto reports = Reports(**store);
    CHECK(reports["edge-1"] == "r2");
    CHECK(reports["edge-2"] == "s1");
    writer.Put("edge-2", "s2");  // queued, written by the destructor at the latest
  }
  CHECK(Reports(**store)["edge-2"] == "s2");
}

}  // namespace
}  // namespace meshwork::central
