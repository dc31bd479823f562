#include <catch2/catch.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "boost/asio/io_context.hpp"
#include "common/http/session_base.h"

namespace meshwork::http::server_internal {
namespace {

// A session that only exists: the registry never calls into it.
class IdleSession final : public SessionBase {
 public:
  explicit IdleSession(boost::asio::io_context& io) : io_(io) {}
  void Start() override {}
  void Shutdown() override { shut_down = true; }
  void Complete(Response) override {}
  void CompleteBuffers(Response, SharedBuffers, uint64_t, uint64_t) override {}
  void CompleteFile(Response, std::shared_ptr<const OpenFile>, uint64_t, uint64_t) override {}
  void ReadChunk(BodyReader::ChunkFn) override {}
  bool BeginChunked(Response) override { return false; }
  void QueueChunk(std::shared_ptr<const std::string>) override {}
  boost::asio::any_io_executor executor() override { return io_.get_executor(); }
  bool OnWorker() override { return false; }
  void OnDeadline() override {}
  bool shut_down = false;

 private:
  boost::asio::io_context& io_;
};

TEST_CASE("A destroyed session leaves its worker's registry, wherever it was in the list") {
  boost::asio::io_context io;
  SessionRegistry registry;
  std::vector<std::shared_ptr<SessionBase>> sessions;
  for (int i = 0; i < 5; ++i) {
    sessions.push_back(std::make_shared<IdleSession>(io));
    registry.Add(*sessions.back());
  }
  CHECK(registry.size() == 5);
  sessions[2].reset();  // the middle
  sessions[4].reset();  // the newest (the head)
  sessions[0].reset();  // the oldest (the tail)
  CHECK(registry.size() == 2);
  auto live = registry.LiveSessions();
  REQUIRE(live.size() == 2);
  CHECK(((live[0] == sessions[1] && live[1] == sessions[3]) ||
         (live[0] == sessions[3] && live[1] == sessions[1])));
  live.clear();
  sessions.clear();
  CHECK(registry.size() == 0);
  CHECK(registry.LiveSessions().empty());
}

TEST_CASE("Sessions closing on other threads while the registry is listed stay consistent") {
  boost::asio::io_context io;
  SessionRegistry registry;
  constexpr int kPerThread = 2000;
  std::vector<std::shared_ptr<SessionBase>> keep;  // these stay alive throughout
  for (int i = 0; i < 100; ++i) {
    keep.push_back(std::make_shared<IdleSession>(io));
    registry.Add(*keep.back());
  }
  std::vector<std::thread> closers;
  for (int t = 0; t < 3; ++t) {
    closers.emplace_back([&registry, &io] {
      for (int i = 0; i < kPerThread; ++i) {
        auto s = std::make_shared<IdleSession>(io);
        registry.Add(*s);
      }  // each destroyed at once, on this thread
    });
  }
  size_t listed_at_least = keep.size();
  for (int i = 0; i < 200; ++i) {
    auto live = registry.LiveSessions();
    CHECK(live.size() >= listed_at_least);
    for (auto& s : live) s->Shutdown();
  }
  for (auto& t : closers) t.join();
  CHECK(registry.size() == keep.size());
  for (auto& s : keep) CHECK(static_cast<IdleSession&>(*s).shut_down);
  keep.clear();
  CHECK(registry.size() == 0);
}

}  // namespace
}  // namespace meshwork::http::server_internal
