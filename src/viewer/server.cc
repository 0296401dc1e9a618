// The Foxglove WebSocket protocol (subprotocol foxglove.websocket.v1) on Boost.Beast, and the
// page over plain HTTP on the same port. See src/viewer/README.md for what is refused and how.
#include "viewer/server.h"

#include <fmt/format.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "kestrel/core/error.h"

namespace kestrel::viewer::detail {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using json = nlohmann::json;

constexpr const char* kSubprotocol = "foxglove.websocket.v1";
// JSON messages (status, advertise, service responses) waiting for one client; a client that
// lets more pile up is too slow to be served and is closed.
constexpr std::size_t kMaxControlQueue = 256;
// Beyond this a message is not even read to its end: Beast closes the connection (1009).
constexpr std::size_t kMaxFrameBytes = 64u << 20;
// The kernel's send buffer of each connection [bytes].
constexpr int kSendBufferBytes = 64 * 1024;

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i + 1 == in.size()) {
    const unsigned v = static_cast<unsigned char>(in[i]) << 16;
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const unsigned v =
        (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += t[(v >> 18) & 63];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

void put32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put64(std::string& s, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint32_t get32(const unsigned char* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::uint64_t stamp_ns(Duration t) {
  return t.count() < 0 ? 0 : static_cast<std::uint64_t>(t.count());
}

// One frame to write: a header built for this client and a payload shared between clients.
struct Outgoing {
  bool text = false;
  std::string head;
  std::shared_ptr<const std::string> body;
};

struct Latest {
  Duration stamp{0};
  std::shared_ptr<const std::string> body;
};

}  // namespace

class Session;

// An io_context whose pending handlers can be destroyed without running them, as its destructor
// does: the handlers hold the Impl that owns the io_context, so that destructor never comes.
struct IoContext : net::io_context {
  using net::io_context::shutdown;
};

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  explicit Impl(ServerConfig c) : config(std::move(c)), acceptor(ioc) {}

  ServerConfig config;
  IoContext ioc;
  tcp::acceptor acceptor;
  std::thread thread;
  Counters counters;
  std::string server_info, advertise, advertise_services;

  mutable std::mutex m;  // guards sessions, new_subscriptions
  std::vector<std::weak_ptr<Session>> sessions;
  std::set<std::uint32_t> new_subscriptions;

  void accept();
  void add(const std::shared_ptr<Session>& s);
  void remove_expired();
};

namespace {

bool has_channel(const ServerConfig& c, std::uint32_t channel) {
  for (const auto& ch : c.channels) {
    if (ch.id == channel) return true;
  }
  return false;
}

}  // namespace

// One WebSocket client. Everything that touches the stream runs on the I/O thread; the step
// thread only stores messages under `m` and posts a write.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Server::Impl> server)
      : ws_(std::move(socket)), server_(std::move(server)) {}

  template <class Request>
  void start(Request req, bool refuse_full) {
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.read_message_max(kMaxFrameBytes);
    ws_.set_option(websocket::stream_base::decorator([](websocket::response_type& res) {
      res.set(http::field::sec_websocket_protocol, kSubprotocol);
      res.set(http::field::server, "kestrel");
    }));
    ws_.async_accept(req, [self = shared_from_this(), refuse_full](beast::error_code ec) {
      if (ec) return;
      self->open_ = true;
      if (refuse_full) {
        self->server_->counters.refused++;
        self->queue_status(2, fmt::format("refused: {} clients are connected, the limit of this "
                                          "server (--viewer clients at once)",
                                          self->server_->config.max_clients));
        self->close_after_write_ = true;
        return;
      }
      self->server_->counters.clients++;
      self->counted_ = true;
      self->queue_text(self->server_->server_info);
      self->queue_text(self->server_->advertise);
      if (!self->server_->advertise_services.empty()) {
        self->queue_text(self->server_->advertise_services);
      }
      self->read();
    });
  }

  ~Session() {
    if (counted_) server_->counters.clients--;
  }

  // Step thread.
  void offer(const exports::Message& msg, const std::shared_ptr<const std::string>& body) {
    std::lock_guard lock(m_);
    if (!open_ || closing_) return;
    auto sub = by_channel_.find(msg.channel);
    if (sub == by_channel_.end()) return;
    auto& slot = latest_[msg.channel];
    if (slot.body) server_->counters.dropped++;
    slot.stamp = msg.stamp;
    slot.body = body;
    kick_locked();
  }

  void offer_time(Duration t) {
    std::lock_guard lock(m_);
    if (!open_ || closing_ || by_channel_.empty()) return;
    time_ = t;
    has_time_ = true;
    kick_locked();
  }

  bool subscribes(std::uint32_t channel) const {
    std::lock_guard lock(m_);
    return by_channel_.count(channel) != 0;
  }

 private:
  void kick_locked() {
    if (writing_ || kicked_) return;
    kicked_ = true;
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      {
        std::lock_guard lock(self->m_);
        self->kicked_ = false;
      }
      self->write();
    });
  }

  // A JSON reply (text) or a binary one, after those queued before it.
  void queue(bool text, std::string bytes) {
    {
      std::lock_guard lock(m_);
      if (!push_locked(text, std::move(bytes))) return;
    }
    write();
  }
  void queue_text(std::string text) { queue(true, std::move(text)); }
  void queue_binary(std::string frame) { queue(false, std::move(frame)); }

  // Under m_. False if the connection is closing; a client that does not read what it asked
  // for is closed (the close is written next) rather than buffered without bound.
  bool push_locked(bool text, std::string bytes) {
    if (closing_) return false;
    if (control_.size() >= kMaxControlQueue) {
      closing_ = true;
      server_->counters.refused++;
      return true;
    }
    control_.push_back(Outgoing{text, {}, std::make_shared<const std::string>(std::move(bytes))});
    return true;
  }

  // Under m_: a status (level 2: error, 1: warning), counted as refused.
  void refuse_locked(const std::string& why, int level = 2) {
    server_->counters.refused++;
    push_locked(true, json{{"op", "status"}, {"level", level}, {"message", why}}.dump());
  }

  void queue_status(int level, const std::string& message) {
    queue_text(json{{"op", "status"}, {"level", level}, {"message", message}}.dump());
  }

  void refuse(const std::string& why) {
    server_->counters.refused++;
    queue_status(2, why);
  }

  // Under m_: the next frame, control messages first, then the newest message of each channel
  // in turn, then the time. False if there is none.
  bool pick_locked(Outgoing& out) {
    if (!control_.empty()) {
      out = std::move(control_.front());
      control_.pop_front();
      return true;
    }
    while (!latest_.empty()) {
      auto it = latest_.upper_bound(last_channel_);
      if (it == latest_.end()) it = latest_.begin();
      last_channel_ = it->first;
      auto sub = by_channel_.find(it->first);
      const bool live = sub != by_channel_.end() && it->second.body;
      if (live) {
        out = Outgoing{};
        out.head += '\x01';
        put32(out.head, sub->second);
        put64(out.head, stamp_ns(it->second.stamp));
        out.body = std::move(it->second.body);
      }
      latest_.erase(it);
      if (live) return true;
    }
    if (has_time_) {
      has_time_ = false;
      out = Outgoing{};
      out.head += '\x02';
      put64(out.head, stamp_ns(time_));
      return true;
    }
    return false;
  }

  // I/O thread: writes the next frame unless one is being written; closes the connection when
  // it was asked to.
  void write() {
    {
      std::lock_guard lock(m_);
      if (writing_ || !open_) return;
      if (!closing_ && !pick_locked(inflight_)) {
        if (!close_after_write_) return;
        closing_ = true;
      }
      if (closing_) {
        if (close_sent_) return;
        close_sent_ = true;
        writing_ = true;
        ws_.async_close(websocket::close_code::try_again_later,
                        [self = shared_from_this()](beast::error_code) {
                          std::lock_guard lock(self->m_);
                          self->writing_ = false;
                        });
        return;
      }
      writing_ = true;
    }
    ws_.text(inflight_.text);
    std::array<net::const_buffer, 2> bufs{
        net::buffer(inflight_.head),
        inflight_.body ? net::buffer(*inflight_.body) : net::const_buffer()};
    ws_.async_write(bufs, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      {
        std::lock_guard lock(self->m_);
        self->writing_ = false;
        self->inflight_ = {};
        if (ec) {
          self->open_ = false;
          return;
        }
      }
      self->write();
    });
  }

  void read() {
    ws_.async_read_some(
        buffer_, 64 * 1024,
        [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(beast::error_code ec, std::size_t n) {
    if (ec) {
      std::lock_guard lock(m_);
      open_ = false;
      if (ec == websocket::error::message_too_big) server_->counters.refused++;
      return;
    }
    message_bytes_ += n;
    const std::size_t limit = server_->config.max_message_bytes;
    if (message_bytes_ > limit) {
      discarding_ = true;
      buffer_.clear();
    }
    if (ws_.is_message_done()) {
      if (discarding_) {
        refuse(fmt::format("refused: a message of {} bytes (this server reads at most {})",
                           message_bytes_, limit));
      } else {
        const auto data = buffer_.data();
        handle(ws_.got_text(),
               std::string_view(static_cast<const char*>(data.data()), data.size()));
      }
      buffer_.clear();
      discarding_ = false;
      message_bytes_ = 0;
    }
    read();
  }

  void handle(bool text, std::string_view data) {
    if (!text) return handle_binary(data);
    json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return refuse("refused: a text message that is not JSON");
    if (!j.is_object() || !j.contains("op") || !j["op"].is_string()) {
      return refuse("refused: a JSON message without a string 'op'");
    }
    const std::string op = j["op"];
    if (op == "subscribe") return subscribe(j);
    if (op == "unsubscribe") return unsubscribe(j);
    refuse(
        fmt::format("refused: op '{}' is not supported (this server supports subscribe, "
                    "unsubscribe and service calls)",
                    op.substr(0, 64)));
  }

  static bool is_u32(const json& v) {
    return v.is_number_unsigned() && v.get<std::uint64_t>() <= 0xffffffffull;
  }

  void subscribe(const json& j) {
    if (!j.contains("subscriptions") || !j["subscriptions"].is_array()) {
      return refuse("refused: subscribe without a 'subscriptions' array");
    }
    std::vector<std::uint32_t> added;
    for (const auto& s : j["subscriptions"]) {
      if (!s.is_object() || !s.contains("id") || !s.contains("channelId") || !is_u32(s["id"]) ||
          !is_u32(s["channelId"])) {
        refuse("refused: a subscription needs an unsigned 32-bit 'id' and 'channelId'");
        continue;
      }
      const std::uint32_t id = s["id"], channel = s["channelId"];
      if (!has_channel(server_->config, channel)) {
        refuse(fmt::format("refused: subscription {}: no channel {}", id, channel));
        continue;
      }
      std::lock_guard lock(m_);
      if (subs_.count(id)) {
        refuse_locked(fmt::format("refused: subscription id {} is in use", id));
        continue;
      }
      if (by_channel_.count(channel)) {
        refuse_locked(fmt::format("refused: channel {} is already subscribed", channel));
        continue;
      }
      subs_[id] = channel;
      by_channel_[channel] = id;
      added.push_back(channel);
    }
    {
      std::lock_guard server_lock(server_->m);
      server_->new_subscriptions.insert(added.begin(), added.end());
    }
    write();
  }

  void unsubscribe(const json& j) {
    if (!j.contains("subscriptionIds") || !j["subscriptionIds"].is_array()) {
      return refuse("refused: unsubscribe without a 'subscriptionIds' array");
    }
    for (const auto& v : j["subscriptionIds"]) {
      if (!is_u32(v)) {
        refuse("refused: a subscription id is an unsigned 32-bit number");
        continue;
      }
      std::lock_guard lock(m_);
      auto it = subs_.find(v.get<std::uint32_t>());
      if (it == subs_.end()) {
        refuse_locked(fmt::format("unsubscribe: no subscription {}", v.dump()), 1);
        continue;
      }
      latest_.erase(it->second);
      by_channel_.erase(it->second);
      subs_.erase(it);
    }
    write();
  }

  void handle_binary(std::string_view data) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    if (data.empty()) return refuse("refused: an empty binary message");
    if (p[0] != 0x02) {
      return refuse(
          fmt::format("refused: binary op 0x{:02x} is not supported (only service "
                      "call requests, 0x02)",
                      p[0]));
    }
    if (data.size() < 13) return refuse("refused: a service call request shorter than 13 bytes");
    const std::uint32_t service = get32(p + 1), call = get32(p + 5), enc_len = get32(p + 9);
    if (enc_len > data.size() - 13) {
      return refuse("refused: a service call request whose encoding runs past its end");
    }
    const std::string encoding(data.substr(13, enc_len));
    const std::string payload(data.substr(13 + enc_len));
    auto fail = [&](const std::string& why) {
      server_->counters.refused++;
      queue_text(json{
          {"op", "serviceCallFailure"}, {"serviceId", service}, {"callId", call}, {"message", why}}
                     .dump());
    };
    bool known = false;
    for (const auto& s : server_->config.services) known = known || s.id == service;
    if (!known) return fail(fmt::format("no service {}", service));
    if (encoding != "json") {
      return fail(fmt::format("encoding '{}' is not supported (json)", encoding.substr(0, 32)));
    }
    const ServiceResult r = server_->config.call(service, payload);
    if (!r.ok) return fail(r.text);
    std::string frame;
    frame += '\x03';
    put32(frame, service);
    put32(frame, call);
    put32(frame, 4);
    frame += "json";
    frame += r.text;
    queue_binary(std::move(frame));
  }

  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<Server::Impl> server_;
  beast::flat_buffer buffer_;
  std::size_t message_bytes_ = 0;
  bool discarding_ = false;
  bool counted_ = false;

  mutable std::mutex m_;
  bool open_ = false, closing_ = false, close_sent_ = false, close_after_write_ = false;
  bool writing_ = false, kicked_ = false;
  std::deque<Outgoing> control_;
  std::map<std::uint32_t, Latest> latest_;  // by channel
  std::uint32_t last_channel_ = 0;
  bool has_time_ = false;
  Duration time_{0};
  std::map<std::uint32_t, std::uint32_t> subs_;        // subscription id -> channel
  std::map<std::uint32_t, std::uint32_t> by_channel_;  // channel -> subscription id
  Outgoing inflight_;
};

namespace {

// A plain HTTP connection: the page, or the upgrade to a WebSocket session.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<Server::Impl> server)
      : stream_(std::move(socket)), server_(std::move(server)) {}

  void start() {
    parser_.emplace();
    parser_->header_limit(16 * 1024);
    parser_->body_limit(64 * 1024);
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

 private:
  void on_request(beast::error_code ec) {
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout) {
        server_->counters.refused++;
      }
      return;
    }
    auto req = parser_->release();
    if (websocket::is_upgrade(req)) {
      const std::string protocols(req[http::field::sec_websocket_protocol]);
      if (protocols.find(kSubprotocol) == std::string::npos) {
        server_->counters.refused++;
        return reply(
            http::status::bad_request, "text/plain",
            std::string("WebSocket clients must offer the subprotocol ") + kSubprotocol + "\n",
            req.version());
      }
      stream_.expires_never();
      auto s = std::make_shared<Session>(stream_.release_socket(), server_);
      bool full;
      {
        std::lock_guard lock(server_->m);
        server_->remove_expired();
        full = server_->sessions.size() >= server_->config.max_clients;
        if (!full) server_->add(s);
      }
      s->start(std::move(req), full);
      return;
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      server_->counters.refused++;
      return reply(http::status::method_not_allowed, "text/plain", "GET only\n", req.version());
    }
    std::string type;
    std::string body = server_->config.page ? server_->config.page(std::string(req.target()), type)
                                            : std::string();
    if (type.empty()) {
      return reply(http::status::not_found, "text/plain", "not found\n", req.version());
    }
    reply(http::status::ok, type, std::move(body), req.version(), req.method() == http::verb::head);
  }

  void reply(http::status status, const std::string& type, std::string body, unsigned version,
             bool head = false) {
    auto res = std::make_shared<http::response<http::string_body>>(status, version);
    res->set(http::field::server, "kestrel");
    res->set(http::field::content_type, type);
    res->set(http::field::cache_control, "no-store");
    res->keep_alive(false);
    res->body() = std::move(body);
    res->prepare_payload();
    if (head) res->body().clear();
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code, std::size_t) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                      });
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Server::Impl> server_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

}  // namespace

void Server::Impl::remove_expired() {
  std::erase_if(sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
}

void Server::Impl::add(const std::shared_ptr<Session>& s) { sessions.push_back(s); }

void Server::Impl::accept() {
  acceptor.async_accept(
      net::make_strand(ioc), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
        if (!self->acceptor.is_open()) return;
        if (!ec) {
          // Small send buffers: a client that stops reading fills them soon, and from then on its
          // newest-wins slots drop (counted) instead of the kernel queueing seconds of old state.
          beast::error_code ignored;
          socket.set_option(net::socket_base::send_buffer_size(kSendBufferBytes), ignored);
          socket.set_option(tcp::no_delay(true), ignored);
          std::make_shared<HttpSession>(std::move(socket), self)->start();
        }
        self->accept();
      });
}

Server::Server(ServerConfig config) : impl_(std::make_shared<Impl>(std::move(config))) {
  auto& c = impl_->config;
  beast::error_code ec;
  const auto address = net::ip::make_address(c.ip, ec);
  if (ec) throw Error(fmt::format("viewer: '{}' is not an IP address (--viewer-ip)", c.ip));
  const tcp::endpoint ep(address, c.port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error(
        fmt::format("viewer: cannot listen on {}:{}: {} (--viewer-port chooses another "
                    "port, 0 any free one)",
                    c.ip, c.port, ec.message()));
  }

  json info = {{"op", "serverInfo"},
               {"name", c.name},
               {"capabilities", json::array({"time", "services"})},
               {"supportedEncodings", json::array({"json"})},
               {"metadata", json::object()},
               {"sessionId", std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count())}};
  impl_->server_info = info.dump();
  json channels = json::array();
  for (const auto& ch : c.channels) {
    channels.push_back(
        {{"id", ch.id},
         {"topic", ch.topic},
         {"encoding", ch.encoding},
         {"schemaName", ch.schema_name},
         {"schemaEncoding", ch.schema_encoding},
         {"schema", ch.schema_encoding == "protobuf" ? base64(ch.schema) : ch.schema}});
  }
  impl_->advertise = json{{"op", "advertise"}, {"channels", channels}}.dump();
  if (!c.services.empty()) {
    json services = json::array();
    for (const auto& s : c.services) {
      auto schema = [](const std::string& name, const std::string& text) {
        return json{{"encoding", "json"},
                    {"schemaName", name},
                    {"schemaEncoding", "jsonschema"},
                    {"schema", text}};
      };
      services.push_back({{"id", s.id},
                          {"name", s.name},
                          {"type", s.type},
                          {"requestSchema", s.request_schema},
                          {"responseSchema", s.response_schema},
                          {"request", schema(s.type + "_Request", s.request_schema)},
                          {"response", schema(s.type + "_Response", s.response_schema)}});
    }
    impl_->advertise_services = json{{"op", "advertiseServices"}, {"services", services}}.dump();
  }
  impl_->accept();
  impl_->thread = std::thread([impl = impl_] { impl->ioc.run(); });
}

Server::~Server() {
  net::post(impl_->ioc, [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
  impl_->ioc.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // The handlers left in the queue (the accept, the sessions' reads and writes, the close above)
  // each hold the Impl: destroying them lets it go (they leaked at exit before).
  impl_->ioc.shutdown();
}

std::uint16_t Server::port() const { return impl_->acceptor.local_endpoint().port(); }

const Counters& Server::counters() const { return impl_->counters; }

bool Server::subscribed(std::uint32_t channel) const {
  std::lock_guard lock(impl_->m);
  for (const auto& w : impl_->sessions) {
    if (auto s = w.lock(); s && s->subscribes(channel)) return true;
  }
  return false;
}

std::set<std::uint32_t> Server::take_new_subscriptions() {
  std::lock_guard lock(impl_->m);
  return std::exchange(impl_->new_subscriptions, {});
}

void Server::publish(const exports::Message& m) {
  auto body = std::make_shared<const std::string>(m.data);
  std::lock_guard lock(impl_->m);
  for (const auto& w : impl_->sessions) {
    if (auto s = w.lock()) s->offer(m, body);
  }
}

void Server::publish_time(Duration t) {
  std::lock_guard lock(impl_->m);
  for (const auto& w : impl_->sessions) {
    if (auto s = w.lock()) s->offer_time(t);
  }
}

}  // namespace kestrel::viewer::detail
