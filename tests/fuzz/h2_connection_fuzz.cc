// S-24: the HTTP/2 frame layer (H2Connection over nghttp2) on arbitrary frames after a valid
// client preface, fed in pieces as a socket would deliver them. Every request is answered
// at once (whole bodies, streamed bodies, HEAD), so the response paths and flow control run
// too. Properties: no crash, no leak, output only after Start, and once Receive() has said
// "close" it keeps saying so.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/http/h2_connection.h"

namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using meshwork::http::H2Connection;
  using meshwork::http::Request;
  using meshwork::http::Response;
  meshwork::http::H2Limits limits;
  limits.max_concurrent_streams = 8;
  limits.max_header_list_bytes = 2048;
  limits.max_request_body_bytes = 4096;
  H2Connection* self = nullptr;
  H2Connection server(limits, [&self](int32_t id, Request request) {
    Response res{boost::beast::http::status::ok, 11};
    res.set(boost::beast::http::field::content_type, "video/mp4");
    if (id % 4 == 1) {
      self->StartStream(id, res);
      self->StreamData(id, std::make_shared<const std::string>(request.target().size() + 1, 'x'));
      self->StreamData(id, nullptr);
    } else {
      res.body() = std::string(static_cast<size_t>(id) * 97 % 40000, 'y');
      self->Respond(id, std::move(res));
    }
  });
  self = &server;
  server.Start();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte chooses the piece size (1…256 bytes), as reads from a socket would cut.
  size_t piece = input.empty() ? 1 : static_cast<unsigned char>(input[0]) + 1;
  if (!input.empty()) input.remove_prefix(1);
  bool open = server.Receive(kPreface);
  auto clock = H2Connection::Clock::time_point{} + std::chrono::seconds(1);
  for (size_t at = 0; at < input.size() && open; at += piece) {
    open = server.Receive(input.substr(at, piece), clock);
    clock += std::chrono::milliseconds(1);
    std::string out = server.TakeOutput();
    (void)out;
  }
  if (!open && server.Receive("x")) __builtin_trap();  // "close" must stick
  server.TakeOutput();
  return 0;
}
