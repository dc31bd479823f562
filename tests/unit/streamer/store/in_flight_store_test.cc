// P-13: objects in flight (streamer/store/in_flight.h) — pieces shared with readers as they
// arrive, wakes posted outside the lock, every bound. This file runs under TSan too
// (tests/CMakeLists.txt: TSAN_TEST_FILE_PATTERNS, *_store_test.cc).
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/post.hpp"
#include "streamer/store/in_flight.h"

namespace meshwork::streamer::in_flight_store_test {
namespace {

using State = GrowingObject::State;
const ObjectKey kPart{ObjectKey::kPart, 7, 2};

size_t Drain(boost::asio::io_context& io) {
  io.restart();
  return io.poll();
}

// A reader as the viewer routes run one: reads what came, waits for the next change.
struct Reader {
  std::shared_ptr<GrowingObject> object;
  boost::asio::io_context* io;
  std::string got;
  size_t next = 0;
  State state = State::kArriving;
  int wakes = 0;
  void Read() {
    auto read = object->ReadFrom(next, io->get_executor(), [this] {
      ++wakes;
      Read();
    });
    for (const auto& c : read.chunks) got += *c;
    next += read.chunks.size();
    state = read.state;
    if (!read.chunks.empty()) Read();
  }
};

TEST_CASE("P-13 a reader of an object in flight gets each piece as it arrives, then the end") {
  InFlightObjects registry;
  auto object = registry.Begin("live", "v1", kPart);
  REQUIRE(object);
  CHECK(registry.size() == 1);
  CHECK(registry.Find("live", "v1", kPart) == object);
  CHECK(registry.Find("live", "a1", kPart) == nullptr);
  boost::asio::io_context io;
  Reader reader{object, &io};
  reader.Read();  // nothing yet: waits
  CHECK(reader.got.empty());
  object->Append("moof");
  CHECK(reader.got.empty());  // the wake is posted, never run inside Append
  CHECK(Drain(io) == 1);
  CHECK(reader.got == "moof");
  object->Append("mdat-1");
  object->Append("mdat-2");
  Drain(io);
  CHECK(reader.got == "moofmdat-1mdat-2");
  CHECK(reader.state == State::kArriving);
  object->Complete();
  Drain(io);
  CHECK(reader.state == State::kComplete);
  object->Append("late");  // after the end: changes nothing
  object->Fail();
  CHECK(object->state() == State::kComplete);
  CHECK(object->bytes() == 16);
  // A reader arriving after the end reads it all at once.
  Reader late{object, &io};
  late.Read();
  CHECK(late.got == "moofmdat-1mdat-2");
  CHECK(late.state == State::kComplete);
  CHECK(Drain(io) == 0);
}

TEST_CASE("P-13 objects in flight are bounded: one per key, a count, bytes, readers") {
  InFlightObjects registry(
      InFlightObjects::Options{.max_objects = 2, .max_bytes = 8, .max_readers = 1});
  auto a = registry.Begin("live", "v1", kPart);
  REQUIRE(a);
  CHECK(registry.Begin("live", "v1", kPart) == nullptr);  // in flight already
  auto b = registry.Begin("live", "a1", kPart);
  REQUIRE(b);
  CHECK(registry.Begin("other", "v1", kPart) == nullptr);  // max_objects
  // End removes only the object registered under the key.
  registry.End("live", "v1", kPart, b);
  CHECK(registry.Find("live", "v1", kPart) == a);
  registry.End("live", "a1", kPart, b);
  CHECK(registry.size() == 1);
  CHECK(registry.Begin("other", "v1", kPart) != nullptr);
  // Past max_bytes the object fails, and its waiting reader is woken to see it.
  boost::asio::io_context io;
  Reader first{a, &io};
  first.Read();
  auto refused = a->ReadFrom(0, io.get_executor(), [] { FAIL("kept beyond max_readers"); });
  CHECK_FALSE(refused.waiting);  // the caller falls back to the store's hold
  a->Append("12345");
  Drain(io);
  CHECK(first.got == "12345");
  a->Append("6789");  // 9 bytes > 8
  Drain(io);
  CHECK(a->state() == State::kFailed);
  CHECK(first.state == State::kFailed);
  CHECK(first.got == "12345");
}

TEST_CASE("P-13 a producer and readers on other threads see the same bytes in order") {
  InFlightObjects registry;
  auto object = registry.Begin("live", "v1", kPart);
  REQUIRE(object);
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread runner([&io] { io.run(); });
  std::vector<std::unique_ptr<Reader>> readers;
  for (int i = 0; i < 4; ++i) readers.push_back(std::make_unique<Reader>(Reader{object, &io}));
  for (auto& r : readers) boost::asio::post(io, [&r] { r->Read(); });
  std::string expected;
  std::thread producer([&] {
    for (int i = 0; i < 200; ++i) {
      std::string piece = std::to_string(i) + ",";
      expected += piece;
      object->Append(piece);
    }
    object->Complete();
  });
  producer.join();
  // Readers finish once every wake has run on the io thread.
  work.reset();
  runner.join();
  for (auto& r : readers) {
    CHECK(r->state == State::kComplete);
    CHECK(r->got == expected);
  }
}

}  // namespace
}  // namespace meshwork::streamer::in_flight_store_test
