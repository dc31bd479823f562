// A socket read that remembers a short read, as nginx's event loop does: when `recv` returns
// fewer bytes than asked, the socket is drained, so the next read of this descriptor waits for
// the reactor's next readiness event instead of trying `recv` first and finding nothing.
//
// Why: Asio's own `async_read_some` marks a socket drained only at end of file, so after every
// answer its read of the next request calls `recv`, which fails with EAGAIN while the client
// is still reading the answer — one system call per request that nginx does not make
// (bench/README, origin_404). `async_wait` would skip it but re-arms the descriptor with
// `epoll_ctl(EPOLL_CTL_MOD)` each time, which costs as much.
//
// How: a reactor operation of our own is queued on Asio's epoll reactor for the socket's
// descriptor. Its `perform` reports "done and exhausted" after a short read, which clears the
// descriptor's "try speculatively" flag; the reactor sets it again on the next edge-triggered
// readiness event (under the descriptor's mutex, so an arrival after our `recv` is never
// missed). Every other read of the descriptor (Asio's own) follows the same flag, and stays
// correct: data left after a short read always brings a new event.
//
// This reaches into Asio's detail namespace (the epoll reactor and the socket's
// implementation); the static_assert below pins the build to that reactor. Threading: the
// caller's, as for `async_read_some` — call on the socket's executor; the handler runs on the
// io_context's thread that performs the completion (for our workers: the worker's only thread).
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <utility>

#include "boost/asio.hpp"
#include "boost/asio/recycling_allocator.hpp"

namespace meshwork::http {

#if !defined(BOOST_ASIO_HAS_EPOLL) || defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#error "short_read.h needs Asio's epoll reactor"
#endif

namespace short_read_internal {

namespace adetail = boost::asio::detail;

// Reads the protected implementation of a basic_socket (the standard pointer-to-member way
// of reaching a protected member of a base through a derived class).
template <typename Socket>
struct ImplAccess : Socket {
  static auto& Get(Socket& s) { return (s.*(&ImplAccess::impl_)).get_implementation(); }
};

template <typename Handler>
class RecvOp final : public adetail::reactor_op {
 public:
  RecvOp(int fd, void* data, size_t size, Handler handler)
      : reactor_op(boost::system::error_code(), &RecvOp::Perform, &RecvOp::Complete),
        fd_(fd),
        data_(data),
        size_(size),
        handler_(std::move(handler)) {}

  // Operations come from Asio's per-thread recycling cache, as its own do: no malloc per read
  // on a worker's thread.
  using Allocator = boost::asio::recycling_allocator<RecvOp>;
  template <typename... Args>
  static RecvOp* Create(Args&&... args) {
    Allocator alloc;
    RecvOp* op = alloc.allocate(1);
    return new (op) RecvOp(std::forward<Args>(args)...);
  }
  static void Destroy(RecvOp* op) {
    op->~RecvOp();
    Allocator().deallocate(op, 1);
  }

 private:
  static status Perform(reactor_op* base) {
    auto* op = static_cast<RecvOp*>(base);
    for (;;) {
      ssize_t n = ::recv(op->fd_, op->data_, op->size_, 0);
      if (n > 0) {
        op->bytes_transferred_ = static_cast<size_t>(n);
        // Fewer bytes than room: the receive queue is empty now.
        return static_cast<size_t>(n) < op->size_ ? done_and_exhausted : done;
      }
      if (n == 0) {
        op->ec_ = op->size_ == 0 ? boost::system::error_code() : boost::asio::error::eof;
        return op->size_ == 0 ? done : done_and_exhausted;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;
      op->ec_ = boost::system::error_code(errno, boost::asio::error::get_system_category());
      return done;
    }
  }

  // `owner` is null when the io_context is destroyed with the operation still queued: the
  // operation is freed and the handler never runs.
  static void Complete(void* owner, adetail::operation* base, const boost::system::error_code&,
                       size_t) {
    auto* op = static_cast<RecvOp*>(base);
    Handler handler = std::move(op->handler_);
    boost::system::error_code ec = op->ec_;
    size_t n = op->bytes_transferred_;
    Destroy(op);
    if (owner) handler(ec, n);
  }

 private:
  int fd_;
  void* data_;
  size_t size_;
  Handler handler_;
};

}  // namespace short_read_internal

// Reads at most `buffer.size()` bytes from `socket` (an open, non-blocking-capable TCP socket
// of an io_context) and calls `handler(error_code, bytes)` once, never from inside this call.
// Cancel and close act on it as on Asio's own reads (operation_aborted). End of file:
// asio::error::eof.
template <typename Socket, typename Handler>
void AsyncReadShort(Socket& socket, boost::asio::mutable_buffer buffer, Handler handler) {
  namespace adetail = boost::asio::detail;
  static_assert(std::is_same_v<adetail::reactor, adetail::epoll_reactor>,
                "short_read.h needs Asio's epoll reactor");
  auto& impl = short_read_internal::ImplAccess<Socket>::Get(socket);
  auto* op = short_read_internal::RecvOp<Handler>::Create(socket.native_handle(), buffer.data(),
                                                          buffer.size(), std::move(handler));
  auto& reactor = boost::asio::use_service<adetail::reactor>(socket.get_executor().context());
  if (!socket.is_open()) {
    op->ec_ = boost::asio::error::bad_descriptor;
    reactor.post_immediate_completion(op, false);
    return;
  }
  if ((impl.state_ & adetail::socket_ops::internal_non_blocking) == 0) {
    boost::system::error_code ec;
    if (!adetail::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, ec)) {
      op->ec_ = ec;
      reactor.post_immediate_completion(op, false);
      return;
    }
  }
  // A read that completes at once is posted, not run here (the reactor's rule).
  reactor.start_op(adetail::reactor::read_op, impl.socket_, impl.reactor_data_, op,
                   /*is_continuation=*/false, /*allow_speculative=*/true);
}

}  // namespace meshwork::http
