// The integration tests' scratch directories (MakeTempDir: data directories, etcd members,
// logs) are kept when a test fails, for diagnosis, and removed when the test process ends with
// every test passed: R-10 alone leaves 3.6 GiB per run, and a machine that runs tools/test
// often filled its disk with them. Compiled on its own (not batched): the listener interface
// of Catch2 needs CATCH_CONFIG_EXTERNAL_INTERFACES before catch.hpp is first included.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>
#include <filesystem>
#include <system_error>

#include "tests/integration/harness.h"

namespace meshwork::testing {
namespace {

class RemoveTempDirsWhenPassed : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(Catch::TestRunStats const& stats) override {
    if (stats.totals.assertions.failed != 0 || stats.totals.testCases.failed != 0) return;
    for (const std::string& dir : TempDirsMade()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

CATCH_REGISTER_LISTENER(RemoveTempDirsWhenPassed)

}  // namespace
}  // namespace meshwork::testing
