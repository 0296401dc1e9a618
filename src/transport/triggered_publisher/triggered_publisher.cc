// TriggeredPublisher: publishes its <output> messages when a message on its <input> topic
// matches, after <delay_ms> of sim time, as gz-sim's (Fortress) TriggeredPublisher does. The
// match is decided on the transport thread as the message arrives; without a delay the outputs
// go out through the Outbox at once (Gazebo: its publishing thread), with one the delay is
// counted down by each step's dt in PreUpdate (as Gazebo) and they go out there. See README.md.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "kestrel/transport/transport.h"
#include "transport/common.h"
#include "transport/outbox.h"
#include "transport/triggered_publisher/matcher.h"

namespace kestrel::transport {
namespace {

namespace pb = google::protobuf;

struct Call {
  std::string service;
  std::unique_ptr<pb::Message> request, response;  // the response: its type
  unsigned timeout_ms = 0;
};

struct Output {
  std::string topic;
  std::unique_ptr<pb::Message> message;
  detail::Outbox::Channel* channel = nullptr;
};

class TriggeredPublisher final : public System,
                                 public ISystemConfigurePriority,
                                 public ISystemConfigure,
                                 public ISystemPreUpdate,
                                 public ISystemReset {
 public:
  ~TriggeredPublisher() override {
    {
      std::lock_guard lock(calls_m_);
      quit_ = true;
    }
    calls_cv_.notify_one();
    if (caller_.joinable()) caller_.join();  // after the call in flight, if any
    node_.reset();                           // no callback runs after this
  }

  void configure_priority(ecs::Entity, const Element&, ecs::Registry&,
                          sim::EventBus& events) override {
    ready_sub_ = events.subscribe<detail::TransportReady>(
        [this](const detail::TransportReady& r) { start(r); });
  }

  void configure(ecs::Entity, const Element& config, ecs::Registry&, sim::EventBus&) override {
    // Everything is read (and refused) here; transport starts later (start()), and not at all
    // without it (kestrel check, run --no-transport).
    for (const auto& c : config.children()) {
      const std::string& n = c->name();
      if (n == "input" || n == "output" || n == "delay_ms" || n == "service") continue;
      if (n.find(':') != std::string::npos) continue;  // gz:system_priority, kestrel:...
      throw Error(c->where(), fmt::format("TriggeredPublisher: unknown parameter <{}> (expected "
                                          "input, output, service, delay_ms)",
                                          n));
    }
    const auto inputs = config.children("input");
    if (inputs.size() != 1) {
      throw Error(config.where(), fmt::format("TriggeredPublisher: needs exactly one <input>, "
                                              "found {}",
                                              inputs.size()));
    }
    const Element& in = *inputs[0];
    in.reject_unknown_attributes({"type", "topic"});
    for (const auto& c : in.children()) {
      if (c->name() != "match") {
        throw Error(c->where(),
                    fmt::format("TriggeredPublisher: unknown element <{}> in <input>", c->name()));
      }
    }
    const std::string type = required_attribute(in, "type");
    input_topic_ = valid_topic(in, required_attribute(in, "topic"));
    matchers_ = std::make_unique<detail::InputMatchers>(type, in);
    if (const Element* d = config.child("delay_ms")) {
      const auto ms = d->value<std::string>();
      const auto v = whole_number(ms);
      if (!v) {
        throw Error(d->where(), fmt::format("TriggeredPublisher: <delay_ms> must be a whole "
                                            "number of milliseconds, found '{}'",
                                            ms));
      }
      delay_ = *v > 0 ? Duration{*v * 1'000'000} : Duration{0};  // Gazebo: <= 0 is no delay
    }
    const auto outs = config.children("output");
    for (const Element* e : config.children("service")) {
      e->reject_unknown_attributes({"name", "reqType", "repType", "reqMsg", "timeout"});
      Call call;
      call.service = valid_topic(*e, required_attribute(*e, "name"));
      call.request = detail::make_message(required_attribute(*e, "reqType"),
                                          required_attribute(*e, "reqMsg"), e->where());
      call.response = detail::make_message(required_attribute(*e, "repType"), "", e->where());
      const std::string t = required_attribute(*e, "timeout");
      const auto ms = whole_number(t);
      if (!ms || *ms <= 0 || *ms > 3'600'000) {
        throw Error(e->where(), fmt::format("TriggeredPublisher: <service> timeout must be a whole "
                                            "number of milliseconds in [1, 3600000], found '{}'",
                                            t));
      }
      call.timeout_ms = static_cast<unsigned>(*ms);
      calls_.push_back(std::move(call));
    }
    if (outs.empty() && calls_.empty()) {
      throw Error(config.where(),
                  "TriggeredPublisher: no <output> and no <service> (Gazebo: "
                  "\"no output and service specified\")");
    }
    for (const Element* o : outs) {
      o->reject_unknown_attributes({"type", "topic"});
      Output out;
      out.topic = valid_topic(*o, required_attribute(*o, "topic"));
      out.message = detail::make_message(required_attribute(*o, "type"), o->text(), o->where());
      outputs_.push_back(std::move(out));
    }
  }

  void pre_update(const UpdateInfo& info, ecs::Registry&) override {
    if (info.paused) return;
    for (std::size_t due = queue_.advance(info.dt); due > 0; --due) publish();
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { queue_.clear(); }

 private:
  // The whole number `text` is, if it is one (and fits: delays up to ~106 days of sim time).
  static std::optional<long long> whole_number(const std::string& text) {
    try {
      std::size_t used = 0;
      const long long v = std::stoll(text, &used);
      if (used == text.size() && std::abs(v) < 9'000'000'000'000) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  }

  static std::string required_attribute(const Element& e, const char* key) {
    auto v = e.attribute(key);
    if (!v || v->empty()) {
      throw Error(e.where(),
                  fmt::format("TriggeredPublisher: <{}> needs a {} attribute", e.name(), key));
    }
    return *v;
  }

  static std::string valid_topic(const Element& e, const std::string& topic) {
    std::string t = ignition::transport::TopicUtils::AsValidTopic(topic);
    if (t.empty()) {
      throw Error(e.where(), fmt::format("TriggeredPublisher: '{}' is not a valid topic", topic));
    }
    return t;
  }

  void start(const detail::TransportReady& r) {
    ctx_ = r;
    for (Output& o : outputs_) {
      o.channel = ctx_.outbox->channel(o.topic, o.message->GetTypeName());
    }
    node_ = std::make_unique<ignition::transport::Node>();
    std::function<void(const pb::Message&)> cb = [this](const pb::Message& m) { on_input(m); };
    if (!node_->Subscribe(input_topic_, cb)) {
      throw Error(fmt::format("TriggeredPublisher: cannot subscribe to {}", input_topic_));
    }
    if (!calls_.empty()) caller_ = std::thread([this] { call_services(); });
  }

  // Transport's thread. The Outbox is thread-safe.
  void on_input(const pb::Message& m) {
    if (!matchers_->matches(m)) return;
    if (delay_ > Duration{0}) {
      queue_.add(delay_);
    } else {
      publish();
    }
  }

  void publish() {
    for (Output& o : outputs_) {
      std::unique_ptr<pb::Message> copy(o.message->New());
      copy->CopyFrom(*o.message);
      ctx_.outbox->send(o.channel, std::move(copy));
    }
    if (calls_.empty()) return;
    {
      std::lock_guard lock(calls_m_);
      ++calls_due_;
    }
    calls_cv_.notify_one();
  }

  // Gazebo calls each service, blocking, on its publishing thread; here on a thread of this
  // system's own, never on the step thread or a transport thread (an in-process service such as
  // UserCommands' set_pose waits for the step thread).
  void call_services() {
    while (true) {
      {
        std::unique_lock lock(calls_m_);
        calls_cv_.wait(lock, [&] { return quit_ || calls_due_ > 0; });
        if (quit_) return;
        --calls_due_;
      }
      for (Call& c : calls_) {
        std::unique_ptr<pb::Message> rep(c.response->New());
        bool result = false;
        if (!node_->Request(c.service, *c.request, c.timeout_ms, *rep, result)) {
          spdlog::error("TriggeredPublisher: service call {} timed out after {} ms", c.service,
                        c.timeout_ms);
        } else if (!result) {
          spdlog::error("TriggeredPublisher: service call {} failed", c.service);
        }
      }
    }
  }

  std::string input_topic_;
  std::unique_ptr<detail::InputMatchers> matchers_;
  std::vector<Output> outputs_;
  Duration delay_{0};
  detail::DelayQueue queue_;
  detail::TransportReady ctx_;
  sim::EventBus::Subscription ready_sub_;
  std::unique_ptr<ignition::transport::Node> node_;
  std::vector<Call> calls_;
  std::mutex calls_m_;
  std::condition_variable calls_cv_;
  std::size_t calls_due_ = 0;
  bool quit_ = false;
  std::thread caller_;  // joined in the destructor, before node_ goes
};

}  // namespace

std::unique_ptr<System> make_triggered_publisher_system() {
  return std::make_unique<TriggeredPublisher>();
}

}  // namespace kestrel::transport
