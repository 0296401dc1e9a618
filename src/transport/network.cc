// Where transport traffic goes: IGN_IP (localhost unless the user chose an address).
#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "kestrel/core/error.h"
#include "kestrel/transport/transport.h"
#include "transport/common.h"

namespace kestrel::transport {

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
    return *ip;
  }
  if (const char* env = std::getenv("IGN_IP"); env && *env) return env;
  setenv("IGN_IP", "127.0.0.1", 1);
  return "127.0.0.1";
}

namespace detail {
void log_line(const std::string& what) { spdlog::warn("transport: {}", what); }
}  // namespace detail

}  // namespace kestrel::transport
