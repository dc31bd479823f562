// Responder::SendFile: file bodies sent with sendfile(2) on a plain listener.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "common/http/client.h"
#include "common/http/response.h"
#include "common/http/router.h"
#include "common/http/server.h"
#include "tests/unit/temp_dir.h"

namespace meshwork::http {
namespace {

using namespace std::chrono_literals;

std::string RandomBytes(size_t n) {
  std::mt19937_64 rng(42);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng());
  return out;
}

// GET /file?from=A&length=N answers bytes [A, A+N) of `path` (the whole file by default).
std::unique_ptr<Server> StartFileServer(const std::string& path) {
  ServerOptions options;
  options.name = "test";
  options.listen = "127.0.0.1:0";
  options.threads = 1;
  Router router;
  router.Add({Verb::get, Verb::head}, "/file", [path](RequestContext& ctx, Responder responder) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return responder.Send(MakeResponse(Status::not_found, "", "text/plain"));
    auto file = std::make_shared<OpenFile>(fd, static_cast<uint64_t>(::lseek(fd, 0, SEEK_END)));
    uint64_t from = std::stoull(ctx.QueryParam("from").value_or("0"));
    uint64_t length = std::stoull(ctx.QueryParam("length").value_or("18446744073709551615"));
    Response header{Status::ok, 11};
    header.set(beast_http::field::content_type, "video/mp2t");
    responder.SendFile(std::move(header), std::move(file), from, length);
  });
  auto server = Server::Start(std::move(options), std::move(router));
  REQUIRE(server.ok());
  return std::move(*server);
}

ClientRequest FileRequest(const Server& server, std::string target, Verb method = Verb::get) {
  ClientRequest request;
  request.host = "127.0.0.1";
  request.port = server.port();
  request.method = method;
  request.target = std::move(target);
  request.timeout = 10s;
  return request;
}

TEST_CASE(
    "D-3 a file answer carries the file's bytes, whole and sliced, on a kept-alive connection") {
  TempDir dir;
  std::string path = (dir.path() / "segment.ts").string();
  std::string bytes = RandomBytes(3 * 1024 * 1024 + 17);  // more than a socket buffer
  std::ofstream(path, std::ios::binary) << bytes;
  auto server = StartFileServer(path);
  KeepAliveClient client;

  auto whole = client.Fetch(FileRequest(*server, "/file"));
  REQUIRE(whole.ok());
  CHECK(whole->result() == Status::ok);
  CHECK(whole->body().size() == bytes.size());
  CHECK(whole->body() == bytes);

  auto slice = client.Fetch(FileRequest(*server, "/file?from=1000&length=5000"));
  REQUIRE(slice.ok());
  CHECK(slice->body() == bytes.substr(1000, 5000));

  // A slice past the end is cut to the file.
  auto tail = client.Fetch(FileRequest(*server, "/file?from=" + std::to_string(bytes.size() - 10)));
  REQUIRE(tail.ok());
  CHECK(tail->body() == bytes.substr(bytes.size() - 10));

  auto head = client.Fetch(FileRequest(*server, "/file", Verb::head));
  REQUIRE(head.ok());
  CHECK(head->body().empty());
  CHECK(head->at(beast_http::field::content_length) == std::to_string(bytes.size()));

  CHECK(client.connections_opened() == 1);
}

}  // namespace
}  // namespace meshwork::http
