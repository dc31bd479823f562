// A socket read that remembers a drained socket, as nginx's event loop does: when a read
// empties the receive queue, the next read of this descriptor waits for the reactor's next
// readiness event instead of trying `recv` first and finding nothing.
//
// Why: Asio's own `async_read_some` marks a socket drained only at end of file, so after every
// answer its read of the next request calls `recv`, which fails with EAGAIN while the client
// is still reading the answer — one system call per request that nginx does not make
// (bench/README, origin_404). `async_wait` would skip it but re-arms the descriptor with
// `epoll_ctl(EPOLL_CTL_MOD)` each time, which costs as much.
//
// How: a reactor operation of our own is queued on Asio's epoll reactor for the socket's
// descriptor. Its `perform` reads with `recvmsg` and reports "done and exhausted" when the
// kernel's TCP_INQ hint says the receive queue is empty with no FIN pending (EnableShortReads
// turns the hint on; nginx uses EPOLLRDHUP for the same, which Asio's reactor does not pass
// on). That clears the descriptor's "try speculatively" flag; the reactor sets it again on the
// next edge-triggered readiness event (under the descriptor's mutex, so an arrival after our
// read is never missed). Every other read of the descriptor (Asio's own) follows the same
// flag and stays correct: anything arriving after an empty queue brings a new event.
//
// This reaches into Asio's detail namespace (the epoll reactor and the socket's
// implementation); the static_assert below pins the build to that reactor. Threading: the
// caller's, as for `async_read_some` — call on the socket's executor; the handler runs on the
// io_context's thread that performs the completion (for our workers: the worker's only thread).
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
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
    iovec iov{op->data_, op->size_};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    for (;;) {
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      ssize_t n = ::recvmsg(op->fd_, &msg, 0);
      if (n > 0) {
        op->bytes_transferred_ = static_cast<size_t>(n);
        return QueueEmpty(msg) ? done_and_exhausted : done;
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

  // Whether the read left the receive queue empty with no FIN behind it: TCP_INQ's hint (0
  // only then — the kernel reports 1 after a FIN so that the reader reads on). A short read
  // alone does not say it: a FIN (or urgent data) queued behind the bytes stops the read
  // early and brings no new readiness event. Without the hint (TCP_INQ off): never.
  static bool QueueEmpty(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ) {
        int inq = 0;
        std::memcpy(&inq, CMSG_DATA(c), sizeof(inq));
        return inq == 0;
      }
    }
    return false;
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

// Turns on the kernel's queue hint (TCP_INQ) that lets AsyncReadShort know a read drained the
// socket; without it AsyncReadShort reads like Asio's own read. One system call per
// connection; false when the socket refuses it (not TCP).
template <typename Socket>
bool EnableShortReads(Socket& socket) {
  int one = 1;
  return ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_INQ, &one, sizeof(one)) == 0;
}

using ShortReadReactor = boost::asio::detail::reactor;

// The reactor AsyncReadShort queues `socket`'s reads on. Look it up once per socket and keep
// it: `use_service` locks the io_context's service registry and compares type names.
template <typename Socket>
ShortReadReactor& ShortReadReactorOf(Socket& socket) {
  static_assert(std::is_same_v<ShortReadReactor, boost::asio::detail::epoll_reactor>,
                "short_read.h needs Asio's epoll reactor");
  return boost::asio::use_service<ShortReadReactor>(socket.get_executor().context());
}

// Reads at most `buffer.size()` bytes from `socket` (an open, non-blocking-capable TCP socket
// of an io_context; `reactor` is ShortReadReactorOf(socket)) and calls `handler(error_code,
// bytes)` once, never from inside this call. Cancel and close act on it as on Asio's own reads
// (operation_aborted). End of file: asio::error::eof.
template <typename Socket, typename Handler>
void AsyncReadShort(Socket& socket, ShortReadReactor& reactor, boost::asio::mutable_buffer buffer,
                    Handler handler) {
  namespace adetail = boost::asio::detail;
  auto& impl = short_read_internal::ImplAccess<Socket>::Get(socket);
  auto* op = short_read_internal::RecvOp<Handler>::Create(socket.native_handle(), buffer.data(),
                                                          buffer.size(), std::move(handler));
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
