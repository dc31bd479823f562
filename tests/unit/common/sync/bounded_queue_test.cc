#include "common/sync/bounded_queue.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

namespace meshwork::bounded_queue_test {
namespace {

TEST_CASE("R-3 a bounded queue fits an item only within both its count and its byte bound") {
  BoundedQueue<std::string> queue(3, 100);
  CHECK(queue.Fits(100));
  CHECK_FALSE(queue.Fits(101));
  queue.Push("a", 60);
  CHECK(queue.Fits(40));
  CHECK_FALSE(queue.Fits(41));
  queue.Push("b", 40);
  CHECK(queue.bytes() == 100);
  CHECK(queue.Fits(0));
  CHECK_FALSE(queue.Fits(1));
  queue.Push("c", 0);
  CHECK(queue.size() == 3);
  CHECK_FALSE(queue.Fits(0));  // the count bound, though no byte is left over
  // No overflow from a huge size.
  CHECK_FALSE(queue.Fits(UINT64_MAX));
}

TEST_CASE("R-3 a bounded queue pops in order and gives back each item's bytes") {
  BoundedQueue<std::string> queue(8, 1000);
  queue.Push("first", 300);
  queue.Push("second", 500);
  CHECK(queue.front() == "first");
  CHECK_FALSE(queue.Fits(201));
  CHECK(queue.Pop() == "first");
  CHECK(queue.bytes() == 500);
  CHECK(queue.Fits(500));
  CHECK(queue.Pop() == "second");
  CHECK(queue.empty());
  CHECK(queue.bytes() == 0);
}

TEST_CASE("R-3 an owner may queue one item over the byte bound, and nothing fits beside it") {
  // Central's config stream sends an update larger than the bound when nothing else waits.
  BoundedQueue<std::string> queue(64, 1000);
  CHECK_FALSE(queue.Fits(5000));
  queue.Push("large", 5000);
  CHECK(queue.bytes() == 5000);
  CHECK_FALSE(queue.Fits(0));
  CHECK(queue.Pop() == "large");
  CHECK(queue.Fits(1000));
}

}  // namespace
}  // namespace meshwork::bounded_queue_test
