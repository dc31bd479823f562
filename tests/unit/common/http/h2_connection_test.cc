// S-24: HTTP/2 frames on nghttp2 (H2Connection) against nghttp2's own client session, in
// memory: requests reach the handler, answers (whole, streamed, HEAD) come back, and the
// limits hold (concurrent streams, header list size, request body, rapid reset).
#include "common/http/h2_connection.h"

#include <nghttp2/nghttp2.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace meshwork::http {
namespace {

// nghttp2's client session and what it received, by stream.
class Client {
 public:
  struct Answer {
    int status = 0;
    std::map<std::string, std::string> fields;
    std::string body;
    bool closed = false;
    uint32_t error = 0;  // RST_STREAM code when reset
  };

  Client() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t nlen,
               const uint8_t* value, size_t vlen, uint8_t, void* user) {
          auto& a = static_cast<Client*>(user)->answers[frame->hd.stream_id];
          std::string n(reinterpret_cast<const char*>(name), nlen);
          std::string v(reinterpret_cast<const char*>(value), vlen);
          if (n == ":status") a.status = std::stoi(v);
          a.fields[n] = v;
          return 0;
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cb, [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len, void* user) {
          static_cast<Client*>(user)->answers[id].body.append(reinterpret_cast<const char*>(data),
                                                              len);
          return 0;
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(
        cb, [](nghttp2_session*, int32_t id, uint32_t error, void* user) {
          auto& a = static_cast<Client*>(user)->answers[id];
          a.closed = true;
          a.error = error;
          return 0;
        });
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* frame, void* user) {
          if (frame->hd.type == NGHTTP2_GOAWAY) {
            static_cast<Client*>(user)->goaway_error = frame->goaway.error_code;
          }
          return 0;
        });
    nghttp2_session_client_new(&session, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~Client() { nghttp2_session_del(session); }

  int32_t Get(const std::string& path, const std::string& method = "GET",
              std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> fields = {
        {":method", method}, {":scheme", "http"}, {":authority", "node.test"}, {":path", path}};
    fields.insert(fields.end(), extra.begin(), extra.end());
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields) {
      nva.push_back({reinterpret_cast<uint8_t*>(n.data()), reinterpret_cast<uint8_t*>(v.data()),
                     n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    }
    return nghttp2_submit_request(session, nullptr, nva.data(), nva.size(), nullptr, nullptr);
  }

  std::string Output() {
    std::string out;
    const uint8_t* data = nullptr;
    for (ssize_t n; (n = nghttp2_session_mem_send(session, &data)) > 0;) {
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    return out;
  }
  void Input(const std::string& bytes) {
    REQUIRE(nghttp2_session_mem_recv(session, reinterpret_cast<const uint8_t*>(bytes.data()),
                                     bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }

  nghttp2_session* session = nullptr;
  std::map<int32_t, Answer> answers;
  int64_t goaway_error = -1;
};

// Moves bytes both ways until neither side has anything to send; false when the server
// asked to close.
bool Pump(Client& client, H2Connection& server) {
  bool open = true;
  for (int i = 0; i < 100; ++i) {
    std::string up = client.Output();
    if (!up.empty()) open = server.Receive(up) && open;
    std::string down = server.TakeOutput();
    if (!down.empty()) client.Input(down);
    if (up.empty() && down.empty()) break;
  }
  return open;
}

struct Received {
  int32_t id;
  Request request;
};

// A request handler that keeps what it is given in `into`.
auto Collect(std::vector<Received>& into) {
  return [&into](int32_t id, Request r) { into.push_back({id, std::move(r)}); };
}

// A PUT's body fed to nghttp2's client: all at once, or held open (DEFERRED) until Finish().
struct Upload {
  explicit Upload(std::string bytes, bool ends = true) : data(std::move(bytes)), ends(ends) {}

  int32_t Submit(Client& client, std::string target) {
    nghttp2_data_provider provider{};
    provider.source.ptr = this;
    provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t length,
                                uint32_t* flags, nghttp2_data_source* src, void*) -> ssize_t {
      auto* u = static_cast<Upload*>(src->ptr);
      size_t n = std::min(length, u->data.size() - u->offset);
      if (n == 0 && !u->ends) return NGHTTP2_ERR_DEFERRED;
      std::memcpy(buf, u->data.data() + u->offset, n);
      u->offset += n;
      if (u->offset == u->data.size() && u->ends) *flags |= NGHTTP2_DATA_FLAG_EOF;
      return static_cast<ssize_t>(n);
    };
    std::string m = ":method", put = "PUT", sc = ":scheme", http = "http", pa = ":path",
                au = ":authority", host = "node.test";
    nghttp2_nv nva[] = {
        {reinterpret_cast<uint8_t*>(m.data()), reinterpret_cast<uint8_t*>(put.data()), m.size(),
         put.size(), NGHTTP2_NV_FLAG_NONE},
        {reinterpret_cast<uint8_t*>(sc.data()), reinterpret_cast<uint8_t*>(http.data()), sc.size(),
         http.size(), NGHTTP2_NV_FLAG_NONE},
        {reinterpret_cast<uint8_t*>(pa.data()), reinterpret_cast<uint8_t*>(target.data()),
         pa.size(), target.size(), NGHTTP2_NV_FLAG_NONE},
        {reinterpret_cast<uint8_t*>(au.data()), reinterpret_cast<uint8_t*>(host.data()), au.size(),
         host.size(), NGHTTP2_NV_FLAG_NONE}};
    id = nghttp2_submit_request(client.session, nullptr, nva, 4, &provider, nullptr);
    return id;
  }
  // Ends a held body: its last DATA frame carries END_STREAM.
  void Finish(Client& client) {
    ends = true;
    REQUIRE(nghttp2_session_resume_data(client.session, id) == 0);
  }

  std::string data;
  bool ends;
  size_t offset = 0;
  int32_t id = 0;
};

TEST_CASE(
    "S-24 an HTTP/2 request reaches the handler and whole, streamed and HEAD answers return") {
  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t whole = client.Get("/live/v1/index.m3u8?_HLS_msn=5", "GET", {{"x-test", "1"}});
  int32_t held = client.Get("/live/v1/6.m4s");
  int32_t head = client.Get("/live/v1/5.m4s", "HEAD");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 3);
  CHECK(received[0].request.method() == beast_http::verb::get);
  CHECK(received[0].request.target() == "/live/v1/index.m3u8?_HLS_msn=5");
  CHECK(received[0].request[beast_http::field::host] == "node.test");
  CHECK(received[0].request["x-test"] == "1");
  CHECK(received[2].request.method() == beast_http::verb::head);

  Response ok{beast_http::status::ok, 11};
  ok.set(beast_http::field::content_type, "application/vnd.apple.mpegurl");
  ok.set(beast_http::field::connection, "keep-alive");  // not allowed in HTTP/2: dropped
  ok.body() = "#EXTM3U\n";
  server.Respond(whole, ok);
  Response media{beast_http::status::ok, 11};
  media.body() = std::string(100, 'x');
  server.Respond(head, media);
  Response streamed{beast_http::status::ok, 11};
  streamed.set(beast_http::field::content_type, "video/mp4");
  server.StartStream(held, streamed);
  REQUIRE(Pump(client, server));
  CHECK(client.answers[whole].status == 200);
  CHECK(client.answers[whole].body == "#EXTM3U\n");
  CHECK(client.answers[whole].fields["content-length"] == "8");
  CHECK_FALSE(client.answers[whole].fields.contains("connection"));
  CHECK(client.answers[head].closed);
  CHECK(client.answers[head].body.empty());
  CHECK(client.answers[head].fields["content-length"] == "100");
  // The held stream stays open while its body is produced: one part, then another, then the end.
  CHECK(client.answers[held].status == 200);
  CHECK_FALSE(client.answers[held].closed);
  CHECK(server.StreamOpen(held));
  server.StreamData(held, std::make_shared<const std::string>(70'000, 'a'));  // over one frame
  REQUIRE(Pump(client, server));
  CHECK(client.answers[held].body.size() == 70'000);
  server.StreamData(held, std::make_shared<const std::string>("bb"));
  server.StreamData(held, nullptr);
  REQUIRE(Pump(client, server));
  CHECK(client.answers[held].closed);
  CHECK(client.answers[held].body.size() == 70'002);
  CHECK(server.open_streams() == 0);
  // Answers to a stream that is gone are ignored.
  server.Respond(held, ok);
  CHECK(server.TakeOutput().empty());
}

TEST_CASE("S-24 HTTP/2 answers 204 and 304 without a Content-Length (RFC 9110 8.6)") {
  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t no_content = client.Get("/central/api-v4/zones/z", "OPTIONS");
  int32_t not_modified = client.Get("/live/v1/5.m4s");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 2);
  server.Respond(no_content, Response{beast_http::status::no_content, 11});
  Response unchanged{beast_http::status::not_modified, 11};
  unchanged.body() = "ignored";
  server.Respond(not_modified, unchanged);
  REQUIRE(Pump(client, server));
  for (int32_t id : {no_content, not_modified}) {
    CHECK(client.answers[id].closed);
    CHECK(client.answers[id].body.empty());
    CHECK_FALSE(client.answers[id].fields.contains("content-length"));
  }
  CHECK(client.answers[no_content].status == 204);
  CHECK(client.answers[not_modified].status == 304);
}

TEST_CASE("P-13 a streamed answer that cannot be completed ends with RST_STREAM, not END_STREAM") {
  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t id = client.Get("/live/v1/6.3.m4s");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 1);
  server.StartStream(id, Response{beast_http::status::ok, 11});
  server.StreamData(id, std::make_shared<const std::string>("first half"));
  REQUIRE(Pump(client, server));
  CHECK(client.answers[id].body == "first half");
  CHECK_FALSE(client.answers[id].closed);
  server.ResetStream(id);
  server.StreamData(id, std::make_shared<const std::string>("never sent"));
  REQUIRE(Pump(client, server));
  CHECK(client.answers[id].closed);
  CHECK(client.answers[id].error == NGHTTP2_INTERNAL_ERROR);
  CHECK(client.answers[id].body == "first half");
  CHECK(server.open_streams() == 0);
}

TEST_CASE("P-15 a body of several chunks leaves as views of those chunks, byte for byte") {
  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t id = client.Get("/live/v1/7.m4s");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 1);
  SharedBuffers body;
  std::string expected;
  for (int c = 0; c < 3; ++c) {
    std::string chunk;
    for (int i = 0; i < 20'000; ++i) chunk.push_back(static_cast<char>('a' + (i * 7 + c) % 26));
    expected += chunk;
    body.Append(std::make_shared<const std::string>(std::move(chunk)));
  }
  auto chunks = body.chunks;
  server.Respond(id, Response{beast_http::status::ok, 11}, std::move(body));
  // The DATA payloads point into the answer's own chunks: nothing was copied.
  H2Output out;
  server.TakeOutput(out);
  size_t viewed = 0;
  for (const auto& piece : out.pieces) {
    if (!piece.chunk) continue;
    bool ours = false;
    for (const auto& c : chunks) ours = ours || piece.chunk == c;
    CHECK(ours);
    viewed += piece.length;
  }
  CHECK(viewed == 60'000);  // within the client's initial 64 KiB window
  std::string flat;
  for (const auto& piece : out.pieces) flat.append(out.View(piece));
  client.Input(flat);
  REQUIRE(Pump(client, server));
  CHECK(client.answers[id].closed);
  CHECK(client.answers[id].body == expected);
}

TEST_CASE("R-3 S-24 a file answer is read a frame at a time, as flow control lets it go") {
  // 300 KiB of a recognisable pattern in a temporary file.
  char path[] = "/tmp/meshwork-h2-file-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::unlink(path);
  std::string bytes(300 * 1024, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131) >> 7);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  auto file = std::make_shared<const OpenFile>(fd, bytes.size());

  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t whole = client.Get("/archive/1.ts");
  int32_t range = client.Get("/archive/2.ts");
  int32_t head = client.Get("/archive/3.ts", "HEAD");
  int32_t shorter = client.Get("/archive/4.ts");
  REQUIRE(Pump(client, server));
  server.RespondFile(whole, Response{beast_http::status::ok, 11}, file, 0, bytes.size());
  server.RespondFile(range, Response{beast_http::status::partial_content, 11}, file, 1000, 5000);
  server.RespondFile(head, Response{beast_http::status::ok, 11}, file, 0, bytes.size());
  server.RespondFile(shorter, Response{beast_http::status::ok, 11}, file, bytes.size() - 10, 100);
  // Within the client's first 64 KiB window nothing past it has been read.
  H2Output out;
  server.TakeOutput(out);
  size_t payload = 0;
  for (const auto& piece : out.pieces) payload += piece.chunk ? piece.length : 0;
  CHECK(payload <= 65'535);
  std::string flat;
  for (const auto& piece : out.pieces) flat.append(out.View(piece));
  client.Input(flat);
  REQUIRE(Pump(client, server));
  CHECK(client.answers[whole].fields["content-length"] == std::to_string(bytes.size()));
  CHECK(client.answers[whole].body == bytes);
  CHECK(client.answers[range].status == 206);
  CHECK(client.answers[range].body == bytes.substr(1000, 5000));
  CHECK(client.answers[head].closed);
  CHECK(client.answers[head].body.empty());
  CHECK(client.answers[head].fields["content-length"] == std::to_string(bytes.size()));
  // Promised more than the file holds: the stream is reset, not ended as if whole.
  CHECK(client.answers[shorter].error != 0);
  CHECK(server.open_streams() == 0);
}

TEST_CASE("P-15 R-3 a Range answer sends just its bytes from the shared chunks") {
  std::vector<Received> received;
  H2Connection server({}, Collect(received));
  server.Start();
  Client client;
  int32_t id = client.Get("/seg.ts");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 1);
  SharedBuffers body;
  for (const char* piece : {"0123456789", "abcdefghij", "KLMNOPQRST"}) {
    body.Append(std::make_shared<const std::string>(piece));
  }
  Response header{beast_http::status::partial_content, 11};
  server.Respond(id, std::move(header), body, 7, 16);
  REQUIRE(Pump(client, server));
  CHECK(client.answers[id].status == 206);
  CHECK(client.answers[id].fields["content-length"] == "16");
  CHECK(client.answers[id].body == "789abcdefghijKLM");
  CHECK(client.answers[id].closed);
  CHECK(client.answers[id].error == 0);
}

TEST_CASE("S-24 streams over SETTINGS_MAX_CONCURRENT_STREAMS are refused, the rest served") {
  std::vector<Received> received;
  H2Limits limits;
  limits.max_concurrent_streams = 10;
  H2Connection server(limits, Collect(received));
  server.Start();
  Client client;
  // The client sends 25 requests before it has read the server's SETTINGS.
  for (int i = 0; i < 25; ++i) client.Get("/s/" + std::to_string(i) + ".ts");
  REQUIRE(Pump(client, server));
  CHECK(received.size() == 10);  // held: none is answered yet
  int refused = 0;
  for (const auto& [id, a] : client.answers)
    refused += a.closed && a.error == NGHTTP2_REFUSED_STREAM;
  CHECK(refused == 15);
  CHECK(server.open_streams() == 10);
}

TEST_CASE(
    "S-24 an oversized header list is answered 431 and a large body 413, the connection lives") {
  std::vector<Received> received;
  H2Limits limits;
  limits.max_header_list_bytes = 4096;
  limits.max_request_body_bytes = 1000;
  H2Connection server(limits, Collect(received));
  server.Start();
  Client client;
  int32_t big = client.Get("/a.ts", "GET", {{"x-big", std::string(8000, 'v')}});
  REQUIRE(Pump(client, server));
  CHECK(client.answers[big].status == 431);
  CHECK(client.answers[big].body.find("headers_too_large") != std::string::npos);
  CHECK(received.empty());

  // A PUT with 5000 bytes of body.
  Upload body(std::string(5000, 'p'));
  int32_t upload = body.Submit(client, "/s/a.ts");
  REQUIRE(Pump(client, server));
  CHECK(client.answers[upload].status == 413);
  CHECK(received.empty());
  // The connection still serves.
  int32_t fine = client.Get("/b.ts");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 1);
  CHECK(received[0].id == fine);
}

TEST_CASE("S-24 the connection's own 431 and 413 go through its owner's hook (Date, counting)") {
  std::vector<Received> received;
  H2Limits limits;
  limits.max_header_list_bytes = 4096;
  limits.max_request_body_bytes = 1000;
  std::vector<int> refused;
  std::unique_ptr<H2Connection> server;
  std::vector<std::string> methods;
  server = std::make_unique<H2Connection>(
      limits, Collect(received), [&](int32_t id, std::string_view method, Response refusal) {
        refused.push_back(refusal.result_int());
        methods.emplace_back(method);
        refusal.set(beast_http::field::date, "hooked");
        server->Respond(id, std::move(refusal));
      });
  server->Start();
  Client client;
  int32_t big = client.Get("/a.ts", "GET", {{"x-big", std::string(8000, 'v')}});
  Upload body(std::string(5000, 'p'));
  int32_t upload = body.Submit(client, "/s/a.ts");
  REQUIRE(Pump(client, *server));
  CHECK(refused == std::vector<int>{431, 413});
  CHECK(methods[1] == "PUT");  // what the refusal is counted and logged under
  CHECK(client.answers[big].status == 431);
  CHECK(client.answers[big].fields["date"] == "hooked");
  CHECK(client.answers[upload].status == 413);
  CHECK(client.answers[upload].fields["date"] == "hooked");
  CHECK(received.empty());
}

TEST_CASE("R-3 request bodies a connection buffers are bounded across its unfinished streams") {
  std::vector<Received> received;
  H2Limits limits;
  limits.max_request_body_bytes = 1000;
  limits.max_connection_body_bytes = 1500;
  H2Connection server(limits, Collect(received));
  server.Start();
  Client client;
  // Two uploads of 800 bytes each, neither ended: each is within the per-request bound, the
  // second is not within what the connection may hold for both.
  Upload first(std::string(800, 'a'), false), second(std::string(800, 'b'), false);
  first.Submit(client, "/s/1.ts");
  second.Submit(client, "/s/2.ts");
  REQUIRE(Pump(client, server));
  CHECK(received.empty());
  first.Finish(client);
  second.Finish(client);
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 1);
  CHECK(received[0].id == first.id);
  CHECK(received[0].request.body() == std::string(800, 'a'));
  CHECK(client.answers[second.id].status == 413);
  CHECK(client.answers[second.id].body.find("body_too_large") != std::string::npos);
  // The first body went with its request: the connection's budget is free again.
  Upload third(std::string(1000, 'c'));
  third.Submit(client, "/s/3.ts");
  REQUIRE(Pump(client, server));
  REQUIRE(received.size() == 2);
  CHECK(received[1].id == third.id);
  CHECK(received[1].request.body().size() == 1000);
}

TEST_CASE("S-24 rapid reset (CVE-2023-44487) ends the connection with ENHANCE_YOUR_CALM") {
  std::vector<Received> received;
  H2Limits limits;
  limits.max_resets_per_second = 100;
  limits.max_reset_burst = 200;
  H2Connection server(limits, Collect(received));
  server.Start();
  Client client;
  // Opens `n` streams (their HEADERS reach the server), then cancels them all.
  auto open_and_cancel = [&](int n) {
    std::vector<int32_t> ids;
    for (int i = 0; i < n; ++i) ids.push_back(client.Get("/s/x.ts"));
    bool open = server.Receive(client.Output());
    for (int32_t id : ids) {
      nghttp2_submit_rst_stream(client.session, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    }
    return Pump(client, server) && open;
  };
  // A few cancelled requests are what players do (a seek): no harm.
  CHECK(open_and_cancel(50));
  CHECK(server.resets_received() == 50);
  CHECK(client.goaway_error == -1);
  // Thousands opened and cancelled at once: the server says go away.
  bool open = true;
  for (int round = 0; round < 40 && open; ++round) open = open_and_cancel(50);
  CHECK_FALSE(open);
  CHECK(client.goaway_error == NGHTTP2_ENHANCE_YOUR_CALM);
  CHECK(server.resets_received() >= 200);
  CHECK(server.resets_received() <= 300);
}

TEST_CASE("S-24 bytes that are not HTTP/2 end the connection without a crash") {
  H2Connection server({}, [](int32_t, Request) { FAIL("no request expected"); });
  server.Start();
  CHECK_FALSE(server.Receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  CHECK_FALSE(server.Receive("more"));
}

}  // namespace
}  // namespace meshwork::http
