#pragma once
// The Foxglove WebSocket server (src/viewer/README.md): the only code that includes Boost.Beast.
// One I/O thread runs every connection; the step thread only hands messages over (publish),
// which never blocks on a client.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kestrel/export/export.h"

namespace kestrel::viewer::detail {

struct ServiceDef {
  std::uint32_t id = 0;
  std::string name, type;
  std::string request_schema, response_schema;  // JSON Schema text
};

// What a service call answers: ok and a JSON response, or not ok and why.
struct ServiceResult {
  bool ok = false;
  std::string text;
};

struct ServerConfig {
  std::string ip;
  std::uint16_t port = 0;
  std::size_t max_clients = 16;
  std::size_t max_message_bytes = 1 << 20;
  std::string name;                        // serverInfo's name
  std::vector<exports::Channel> channels;  // advertised to every client
  std::vector<ServiceDef> services;        // advertised to every client
  std::function<ServiceResult(std::uint32_t, const std::string&)> call;         // on the I/O thread
  std::function<std::string(const std::string& path, std::string& type)> page;  // "" = 404
};

struct Counters {
  std::atomic<std::uint64_t> dropped{0};  // messages replaced by newer ones before sending
  std::atomic<std::uint64_t> refused{0};  // bad client messages and refused connections
  std::atomic<std::uint64_t> clients{0};  // WebSocket clients connected now
};

class Server {
 public:
  // Binds and starts the I/O thread. @throws Error if the address cannot be bound.
  explicit Server(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  struct Impl;  // server.cc (its connections hold it)

  std::uint16_t port() const;
  const Counters& counters() const;

  // Whether some client subscribes to the channel now.
  bool subscribed(std::uint32_t channel) const;
  // Channels subscribed since the last call: their next message must not wait for a change
  // (the scene, which is latched, is sent again this way to a new subscriber).
  std::set<std::uint32_t> take_new_subscriptions();
  // Hands a message to every client subscribed to its channel: it replaces the client's
  // unsent message of that channel (a drop, counted) and is written when the client can take
  // it.
  void publish(const exports::Message& m);
  // The server's time (the sim time), to every client.
  void publish_time(Duration t);

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kestrel::viewer::detail
