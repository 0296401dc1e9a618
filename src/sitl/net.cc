#include "sitl/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "kestrel/core/error.h"

namespace kestrel::sitl {
namespace {

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

}  // namespace

void Fd::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

sockaddr_in make_address(const std::string& ip, int port, const std::string& who) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (port <= 0 || port > 65535) {
    throw Error(who + ": port " + std::to_string(port) + " is out of range (expected 1..65535)");
  }
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) {
    throw Error(who + ": '" + ip + "' is not an IPv4 address (expected e.g. 127.0.0.1)");
  }
  return a;
}

Fd tcp_listen(const std::string& ip, int port, const std::string& who) {
  const sockaddr_in a = make_address(ip, port, who);
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw Error(who + ": socket(): " + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(fd.get(), SOMAXCONN) != 0) {
    throw Error(who + ": cannot listen on TCP " + ip + ":" + std::to_string(port) + ": " +
                std::strerror(errno) +
                " (is another simulator using it? choose another instance or port)");
  }
  set_nonblocking(fd.get());
  return fd;
}

Fd tcp_accept(const Fd& listener) {
  Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!c) return c;
  int one = 1;
  ::setsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return c;
}

Fd udp_bind(const std::string& ip, int port, const std::string& who) {
  const sockaddr_in a = make_address(ip, port, who);
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) throw Error(who + ": socket(): " + std::strerror(errno));
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    throw Error(who + ": cannot bind UDP " + ip + ":" + std::to_string(port) + ": " +
                std::strerror(errno) +
                " (is another simulator using it? choose another instance or port)");
  }
  set_nonblocking(fd.get());
  return fd;
}

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0;
  }
}

bool TcpLink::send(const std::uint8_t* data, std::size_t n, std::size_t max_backlog) {
  if (!fd_) return false;
  if (backlog_.empty()) {
    const ssize_t w = ::send(fd_.get(), data, n, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      close();
      return false;
    }
    const std::size_t sent = w > 0 ? static_cast<std::size_t>(w) : 0;
    if (sent == n) return true;
    backlog_.insert(backlog_.end(), data + sent, data + n);
  } else {
    backlog_.insert(backlog_.end(), data, data + n);
  }
  if (!flush()) return false;
  if (backlog_.size() > max_backlog) {
    close();
    return false;
  }
  return true;
}

bool TcpLink::flush() {
  while (!backlog_.empty()) {
    const ssize_t w = ::send(fd_.get(), backlog_.data(), backlog_.size(), MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
      close();
      return false;
    }
    backlog_.erase(backlog_.begin(), backlog_.begin() + w);
  }
  return true;
}

long TcpLink::receive(std::uint8_t* buf, std::size_t n) {
  if (!fd_) return -1;
  if (!backlog_.empty() && !flush()) return -1;
  const ssize_t r = ::recv(fd_.get(), buf, n, 0);
  if (r > 0) return r;
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
  close();  // r == 0: orderly shutdown; r < 0: reset
  return -1;
}

void TcpLink::close() {
  fd_.close();
  backlog_.clear();
}

}  // namespace kestrel::sitl
