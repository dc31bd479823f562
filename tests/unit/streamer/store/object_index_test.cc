// ObjectIndex: a rendition's objects by key, kept sorted in a vector (L-1, L-14).
#include "streamer/store/object_index.h"

#include <catch2/catch.hpp>
#include <vector>

namespace meshwork::streamer::object_index_test {
namespace {

std::shared_ptr<const StoredObject> Object(uint64_t generation) {
  auto o = std::make_shared<StoredObject>();
  o->generation = generation;
  return o;
}

std::vector<ObjectKey> Keys(const ObjectIndex& index) {
  std::vector<ObjectKey> out;
  for (const auto& [key, object] : index) out.push_back(key);
  return out;
}

TEST_CASE(
    "L-1 a rendition's object index finds what was added, in key order, whatever the order added") {
  ObjectIndex index;
  const ObjectKey init{ObjectKey::kInit, -1, -1};
  const ObjectKey ts5{ObjectKey::kTs, 5, -1};
  const ObjectKey ts4{ObjectKey::kTs, 4, -1};
  const ObjectKey m4s5{ObjectKey::kM4s, 5, -1};
  const ObjectKey part51{ObjectKey::kPart, 5, 1};
  const ObjectKey part50{ObjectKey::kPart, 5, 0};
  for (auto [key, gen] :
       {std::pair{part51, 1}, {ts5, 2}, {init, 3}, {m4s5, 4}, {ts4, 5}, {part50, 6}}) {
    auto& slot = index.Slot(key);
    CHECK(slot == nullptr);
    slot = Object(gen);
  }
  CHECK(Keys(index) == std::vector<ObjectKey>{init, ts4, ts5, m4s5, part50, part51});
  REQUIRE(index.Find(ts4) != nullptr);
  CHECK((*index.Find(ts4))->generation == 5);
  CHECK((*index.Find(part51))->generation == 1);
  CHECK(index.Find(ObjectKey{ObjectKey::kPart, 5, 2}) == nullptr);
  CHECK(index.Find(ObjectKey{ObjectKey::kTs, 6, -1}) == nullptr);

  // The slot of a present key is that object's, not a new one.
  index.Slot(ts5) = Object(7);
  CHECK(index.size() == 6);
  CHECK((*index.Find(ts5))->generation == 7);
}

TEST_CASE(
    "L-14 trimming a rendition's object index drops exactly the chosen objects and keeps the "
    "order") {
  ObjectIndex index;
  for (int64_t msn = 0; msn < 20; ++msn) {
    index.Slot(ObjectKey{ObjectKey::kTs, msn, -1}) = Object(msn);
    for (int part = 0; part < 4; ++part) {
      index.Slot(ObjectKey{ObjectKey::kPart, msn, part}) = Object(msn);
    }
  }
  index.Slot(ObjectKey{ObjectKey::kInit, -1, -1}) = Object(99);
  int dropped = 0;
  index.EraseIf([&](const ObjectIndex::Entry& e) {
    bool drop = e.first.kind != ObjectKey::kInit && e.first.msn < 7;
    dropped += drop;
    return drop;
  });
  CHECK(dropped == 7 * 5);
  CHECK(index.size() == 13 * 5 + 1);
  CHECK(index.Find(ObjectKey{ObjectKey::kTs, 6, -1}) == nullptr);
  CHECK(index.Find(ObjectKey{ObjectKey::kPart, 6, 3}) == nullptr);
  CHECK(index.Find(ObjectKey{ObjectKey::kInit, -1, -1}) != nullptr);
  REQUIRE(index.Find(ObjectKey{ObjectKey::kPart, 7, 0}) != nullptr);
  auto keys = Keys(index);
  CHECK(std::is_sorted(keys.begin(), keys.end()));

  // A copy (what a publish makes of the rendition) is independent of the original.
  ObjectIndex copy = index;
  auto* first = &*copy.begin();
  copy.Slot(ObjectKey{ObjectKey::kTs, 20, -1}) = Object(20);
  CHECK(copy.size() == index.size() + 1);
  CHECK(index.Find(ObjectKey{ObjectKey::kTs, 20, -1}) == nullptr);
  CHECK(&*copy.begin() == first);  // the copy had room for the key added: not reallocated
}

}  // namespace
}  // namespace meshwork::streamer::object_index_test
