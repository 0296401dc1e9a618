#pragma once
// Small POSIX socket helpers for the SITL bridges: a non-blocking TCP listener and connection
// with a bounded send backlog, and a UDP socket. Loopback by default; nothing here retries or
// resolves names. Errors the user can fix (port in use) throw kestrel::Error.

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::sitl {

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { close(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      close();
      fd_ = o.release();
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void close();

 private:
  int fd_ = -1;
};

/// An IPv4 address and port ("127.0.0.1", 4560). @throws Error on a malformed address.
sockaddr_in make_address(const std::string& ip, int port, const std::string& who);

/// A non-blocking TCP listening socket (backlog SOMAXCONN: a burst of connections waits in the
/// kernel, not in SYN retries). @throws Error if it cannot bind (port in use).
Fd tcp_listen(const std::string& ip, int port, const std::string& who);
/// Accepts one pending connection (non-blocking, TCP_NODELAY), or an empty Fd if none waits.
Fd tcp_accept(const Fd& listener);

/// A non-blocking UDP socket bound to ip:port. @throws Error if it cannot bind.
Fd udp_bind(const std::string& ip, int port, const std::string& who);

/// Waits until fd is readable or timeout_ms passes (-1: forever). True if readable.
bool wait_readable(int fd, int timeout_ms);

/// A TCP connection: non-blocking reads, writes queued when the peer's window is full.
class TcpLink {
 public:
  TcpLink() = default;
  explicit TcpLink(Fd fd) : fd_(std::move(fd)) {}
  bool open() const { return static_cast<bool>(fd_); }
  int fd() const { return fd_.get(); }
  /// Queues and sends what the socket takes now. False (and closes) if the peer is gone or the
  /// backlog passes max_backlog bytes (a peer that stopped reading).
  bool send(const std::uint8_t* data, std::size_t n, std::size_t max_backlog = 1 << 20);
  /// Reads what is available now into buf. Returns bytes read (0: nothing now); -1 and closes
  /// if the peer closed or the connection failed.
  long receive(std::uint8_t* buf, std::size_t n);
  void close();

 private:
  bool flush();
  Fd fd_;
  std::vector<std::uint8_t> backlog_;
};

}  // namespace kestrel::sitl
