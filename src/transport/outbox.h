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
#include <functional>
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
    /// Only the newest queued message matters (a clock): when several wait in one batch, the
    /// older ones are skipped and counted (Counters::conflated).
    bool latest_only = false;
    std::uint64_t seen = 0;                    // publisher thread only: last batch with one
    ignition::transport::Node::Publisher pub;  // publisher thread only
    bool ready = false;                        // publisher thread only
  };

  /// `counters` is shared: the Outbox (and so its thread) can outlive the system that made it,
  /// because other systems hold it too.
  Outbox(std::shared_ptr<Counters> counters, std::size_t capacity = 8192);
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  /// The channel for `topic` (advertised as `type` by the publisher thread, once). Thread-safe;
  /// the pointer stays valid for the Outbox's lifetime. @throws Error if the topic is already a
  /// channel of another type.
  Channel* channel(const std::string& topic, const std::string& type, bool latest_only = false);
  /// Queues `m` for publication on `ch`. Thread-safe.
  void send(Channel* ch, std::unique_ptr<google::protobuf::Message> m);
  /// Runs `task` on the publisher thread, in order with the channels and tasks queued before it.
  /// For every other call into ignition-transport from the step thread (Node::Subscribe): the
  /// step thread never waits on transport's lock, so it cannot deadlock with an in-process
  /// service callback that waits for the step thread. Thread-safe.
  void run(std::function<void()> task);
  /// Waits until every channel created and every task queued so far is done (configure calls
  /// it, so that the world's topics are listed and subscribed as soon as the world runs).
  void flush();

 private:
  void loop();

  std::shared_ptr<Counters> counters_holder_;
  Counters& counters_;
  const std::size_t capacity_;
  ignition::transport::Node node_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<Channel*> to_advertise_;
  std::vector<std::function<void()>> tasks_;
  std::deque<std::pair<Channel*, std::unique_ptr<google::protobuf::Message>>> queue_;
  std::uint64_t generation_ = 0, advertised_generation_ = 0;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace kestrel::transport::detail
