// A raw TCP client for tests that must send exactly the bytes they mean (bad framing, slow
// reads) and read what comes back, with a deadline on every read. Not thread-safe: one test
// thread drives it.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace meshwork::testing {

namespace raw_detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = boost::beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using Response = beast_http::response<beast_http::string_body>;

// A raw TCP connection to the server, with deadlines on every read.
class RawConnection {
 public:
  // `source`: the loopback address to connect from (127.0.0.2 is another client); default
  // the kernel's choice, 127.0.0.1.
  explicit RawConnection(uint16_t port, int receive_buffer = 0, const char* source = nullptr)
      : socket_(io_) {
    socket_.open(tcp::v4());
    if (receive_buffer > 0) {
      socket_.set_option(asio::socket_base::receive_buffer_size(receive_buffer));
    }
    if (source) socket_.bind(tcp::endpoint(asio::ip::make_address(source), 0));
    socket_.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }

  tcp::socket& socket() { return socket_; }

  // Writes what it can of `data` within `timeout`; returns the bytes written (a peer that
  // stopped reading or closed takes fewer).
  size_t WriteFor(std::string_view data, std::chrono::milliseconds timeout) {
    size_t written = 0;
    bool done = false;
    asio::async_write(socket_, asio::buffer(data.data(), data.size()),
                      [&](beast::error_code, size_t n) {
                        written = n;
                        done = true;
                      });
    RunFor(timeout, done);
    return written;
  }

  void Write(std::string_view data) {
    asio::write(socket_, asio::buffer(data.data(), data.size()));
  }

  // Reads one response; nullopt on an error or when nothing complete came within `timeout`.
  // With `head`, the response is to a HEAD request and has no body.
  std::optional<Response> Read(std::chrono::milliseconds timeout = 5000ms, bool head = false) {
    beast_http::response_parser<beast_http::string_body> parser;
    parser.skip(head);
    bool done = false;
    beast::error_code result;
    beast_http::async_read(socket_, buffer_, parser, [&](beast::error_code ec, size_t) {
      result = ec;
      done = true;
    });
    if (!RunFor(timeout, done)) return std::nullopt;
    if (result) {
      last_error_ = result;
      return std::nullopt;
    }
    return parser.release();
  }

  // True when the server closes the connection (EOF or reset) within `timeout` without
  // sending anything more.
  bool ClosedByPeer(std::chrono::milliseconds timeout = 5000ms) {
    if (buffer_.size() > 0) return false;
    char byte;
    bool done = false;
    beast::error_code result;
    socket_.async_read_some(asio::buffer(&byte, 1), [&](beast::error_code ec, size_t) {
      result = ec;
      done = true;
    });
    if (!RunFor(timeout, done)) return false;
    return result == asio::error::eof || result == asio::error::connection_reset;
  }

  beast::error_code last_error() const { return last_error_; }

 private:
  bool RunFor(std::chrono::milliseconds timeout, bool& done) {
    io_.restart();
    io_.run_for(timeout);
    if (done) return true;
    beast::error_code ignored;
    socket_.cancel(ignored);
    io_.restart();
    io_.run();
    return false;
  }

  asio::io_context io_;
  tcp::socket socket_;
  beast::flat_buffer buffer_;
  beast::error_code last_error_;
};

}  // namespace raw_detail

using raw_detail::RawConnection;

}  // namespace meshwork::testing
