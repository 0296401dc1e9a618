// Where transport traffic goes: IGN_IP (localhost unless the user chose an address), and the
// discovery sockets kept from listening to other hosts when it is localhost.
#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <net/if.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ignition/transport/NodeShared.hh>
#include <mutex>
#include <set>
#include <vector>

#include "kestrel/core/error.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"

namespace kestrel::transport {

namespace {

int env_port(const char* var, int fallback) {
  const char* v = std::getenv(var);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long p = std::strtol(v, &end, 10);
  return end && *end == '\0' && p > 0 && p < 65536 ? static_cast<int>(p) : fallback;
}

}  // namespace

std::vector<int> discovery_sockets() {
  const std::set<int> ports = {env_port("IGN_DISCOVERY_MSG_PORT", 10317),
                               env_port("IGN_DISCOVERY_SRV_PORT", 10318)};
  std::vector<int> out;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return out;
  while (const dirent* e = readdir(dir)) {
    const int fd = std::atoi(e->d_name);
    if (fd <= 2 || fd == dirfd(dir)) continue;
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_DGRAM) continue;
    sockaddr_in addr{};
    len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        addr.sin_family == AF_INET && ports.count(ntohs(addr.sin_port))) {
      out.push_back(fd);
    }
  }
  closedir(dir);
  return out;
}

int restrict_discovery_to_loopback() {
  // ignition-transport 11 binds its discovery receive sockets to 0.0.0.0 on the discovery ports
  // (IGN_DISCOVERY_MSG_PORT, IGN_DISCOVERY_SRV_PORT; 10317 and 10318) whatever IGN_IP says, and
  // takes any host that sends one with the relay flag as a relay it then sends all its
  // discovery to. No variable or option changes that, so Kestrel binds those sockets to the
  // loopback device itself (SO_BINDTODEVICE "lo"): datagrams from other hosts are no longer
  // delivered to them, and what they send can only leave through lo. The sockets exist once the
  // process-wide NodeShared does.
  ignition::transport::NodeShared::Instance();
  int bound = 0;
  std::string why;
  for (const int fd : discovery_sockets()) {
    if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) == 0) {
      ++bound;
    } else {
      why = std::string("SO_BINDTODEVICE: ") + std::strerror(errno);
    }
  }
  if (bound < 2) {
    spdlog::warn(
        "transport: could not restrict ignition-transport's discovery to the loopback device "
        "({}): hosts on the network can send it discovery messages; see README.md, \"Network\"",
        why.empty() ? fmt::format("found {} of its 2 sockets", bound) : why);
  }
  return bound;
}

std::string configure_network(const std::optional<std::string>& ip) {
  if (ip) {
    in_addr a{};
    if (inet_pton(AF_INET, ip->c_str(), &a) != 1) {
      throw Error(
          "--transport-ip: expected a dotted IPv4 address such as 127.0.0.1 or "
          "192.168.1.10, found '" +
          *ip + "'");
    }
    setenv("IGN_IP", ip->c_str(), 1);
    if (ip->rfind("127.", 0) == 0) restrict_discovery_to_loopback();
    return *ip;
  }
  if (const char* env = std::getenv("IGN_IP"); env && *env) {
    if (std::string(env).rfind("127.", 0) == 0) restrict_discovery_to_loopback();
    return env;
  }
  setenv("IGN_IP", "127.0.0.1", 1);
  restrict_discovery_to_loopback();
  return "127.0.0.1";
}

namespace detail {
void log_line(const std::string& what) { spdlog::warn("transport: {}", what); }
}  // namespace detail

}  // namespace kestrel::transport
