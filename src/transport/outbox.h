#pragma once
// Private to src/transport: every message Kestrel publishes goes through the Outbox, whose own
// thread talks to ignition-transport. The step thread only fills a queue and reads atomic
// "someone listens" flags, so it never waits on transport's internal lock. (ignition-transport
// runs an in-process service callback while holding that lock: a callback that waits for the
// step thread would deadlock with a step thread that publishes.) It also keeps serialization
// off the step thread. A full queue drops the message and counts it (Counters::dropped).

#include <google/protobuf/message.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/common.h"

namespace kestrel::transport::detail {

class Outbox {
 public:
  struct Channel {
    std::string topic, type;
    std::atomic<bool> connected{false};  ///< a subscriber is connected (refreshed every ~10 ms)
    ignition::transport::Node::Publisher pub;  // publisher thread only
    bool ready = false;                        // publisher thread only
  };

  Outbox(Counters& counters, std::size_t capacity = 8192);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  /// The channel for `topic` (advertised as `type` by the publisher thread, once). Thread-safe;
  /// the pointer stays valid for the Outbox's lifetime. @throws Error if the topic is already a
  /// channel of another type.
  Channel* channel(const std::string& topic, const std::string& type);
  /// Queues `m` for publication on `ch`. Thread-safe.
  void send(Channel* ch, std::unique_ptr<google::protobuf::Message> m);
  /// Waits until every channel created so far is advertised (configure calls it, so that the
  /// world's topics are listed as soon as the world runs).
  void flush();

 private:
  void loop();

  Counters& counters_;
  const std::size_t capacity_;
  ignition::transport::Node node_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<Channel*> to_advertise_;
  std::deque<std::pair<Channel*, std::unique_ptr<google::protobuf::Message>>> queue_;
  std::uint64_t generation_ = 0, advertised_generation_ = 0;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace kestrel::transport::detail
