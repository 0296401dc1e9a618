#include "transport/outbox.h"

#include "kestrel/core/error.h"

namespace kestrel::transport::detail {

Outbox::Outbox(Counters& counters, std::size_t capacity)
    : counters_(counters), capacity_(capacity), thread_([this] { loop(); }) {}

Outbox::~Outbox() {
  {
    std::lock_guard lock(m_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Outbox::Channel* Outbox::channel(const std::string& topic, const std::string& type) {
  std::lock_guard lock(m_);
  for (auto& c : channels_) {
    if (c->topic != topic) continue;
    if (c->type != type) {
      throw Error("transport: topic " + topic + " is published as " + c->type +
                  " and cannot also carry " + type);
    }
    return c.get();
  }
  auto c = std::make_unique<Channel>();
  c->topic = topic;
  c->type = type;
  channels_.push_back(std::move(c));
  to_advertise_.push_back(channels_.back().get());
  ++generation_;
  cv_.notify_all();
  return channels_.back().get();
}

void Outbox::send(Channel* ch, std::unique_ptr<google::protobuf::Message> m) {
  {
    std::lock_guard lock(m_);
    if (queue_.size() >= capacity_) {
      ++counters_.dropped;
      return;
    }
    queue_.emplace_back(ch, std::move(m));
  }
  cv_.notify_all();
}

void Outbox::flush() {
  std::unique_lock lock(m_);
  const auto target = generation_;
  done_cv_.wait(lock, [&] { return advertised_generation_ >= target || quit_; });
}

void Outbox::loop() {
  using Clock = std::chrono::steady_clock;
  auto next_refresh = Clock::now();
  std::deque<std::pair<Channel*, std::unique_ptr<google::protobuf::Message>>> batch;
  std::vector<Channel*> fresh, all;
  while (true) {
    std::uint64_t gen = 0;
    {
      std::unique_lock lock(m_);
      cv_.wait_for(lock, std::chrono::milliseconds(10),
                   [&] { return quit_ || !queue_.empty() || !to_advertise_.empty(); });
      if (quit_) return;
      batch.swap(queue_);
      fresh.swap(to_advertise_);
      gen = generation_;
      if (!fresh.empty()) {
        all.clear();
        for (auto& c : channels_) all.push_back(c.get());
      }
    }
    for (Channel* c : fresh) {
      c->pub = node_.Advertise(c->topic, c->type);
      if (!c->pub) {
        ++counters_.publish_failures;
        log_line("cannot advertise " + c->topic + " as " + c->type);
      }
      c->ready = static_cast<bool>(c->pub);
    }
    if (!fresh.empty()) {
      fresh.clear();
      {
        std::lock_guard lock(m_);
        advertised_generation_ = gen;
      }
      done_cv_.notify_all();
      next_refresh = Clock::now();
    }
    for (auto& [c, m] : batch) {
      if (c->ready && !c->pub.Publish(*m)) ++counters_.publish_failures;
    }
    batch.clear();
    if (Clock::now() >= next_refresh) {
      for (Channel* c : all) c->connected = c->ready && c->pub.HasConnections();
      next_refresh = Clock::now() + std::chrono::milliseconds(10);
    }
  }
}

}  // namespace kestrel::transport::detail
