#include "transport/outbox.h"

#include "kestrel/core/error.h"

namespace kestrel::transport::detail {

Outbox::Outbox(std::shared_ptr<Counters> counters, std::size_t capacity)
    : counters_holder_(std::move(counters)),
      counters_(*counters_holder_),
      capacity_(capacity),
      thread_([this] { loop(); }) {}

Outbox::~Outbox() {
  {
    std::lock_guard lock(m_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Outbox::Channel* Outbox::channel(const std::string& topic, const std::string& type,
                                 bool latest_only) {
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
  c->latest_only = latest_only;
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

void Outbox::run(std::function<void()> task) {
  {
    std::lock_guard lock(m_);
    tasks_.push_back(std::move(task));
    ++generation_;
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
  constexpr auto kMinBatchPeriod = std::chrono::milliseconds(1);
  auto next_refresh = Clock::now();
  auto batch_start = next_refresh;
  std::deque<std::pair<Channel*, std::unique_ptr<google::protobuf::Message>>> batch;
  std::vector<Channel*> fresh, all;
  std::vector<std::function<void()>> tasks;
  std::uint64_t batch_number = 1;
  while (true) {
    std::uint64_t gen = 0;
    {
      std::unique_lock lock(m_);
      cv_.wait_for(lock, std::chrono::milliseconds(10),
                   [&] {
                     return quit_ || !queue_.empty() || !to_advertise_.empty() || !tasks_.empty();
                   });
      if (quit_) return;
      batch_start = Clock::now();
      batch.swap(queue_);
      fresh.swap(to_advertise_);
      tasks.swap(tasks_);
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
    for (auto& task : tasks) task();
    tasks.clear();
    if (gen != advertised_generation_) {
      fresh.clear();
      {
        std::lock_guard lock(m_);
        advertised_generation_ = gen;
      }
      done_cv_.notify_all();
      next_refresh = Clock::now();
    }
    // Newest first, so that a latest-only channel publishes its newest message and skips the
    // rest; then in queue order.
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
      auto& [c, m] = *it;
      if (!c->latest_only) continue;
      if (c->seen == batch_number) {
        m.reset();
        ++counters_.conflated;
      }
      c->seen = batch_number;
    }
    ++batch_number;
    for (auto& [c, m] : batch) {
      if (m && c->ready && !c->pub.Publish(*m)) ++counters_.publish_failures;
    }
    const bool busy = !batch.empty();
    batch.clear();
    if (Clock::now() >= next_refresh) {
      for (Channel* c : all) c->connected = c->ready && c->pub.HasConnections();
      next_refresh = Clock::now() + std::chrono::milliseconds(10);
    }
    // At most one batch per millisecond while messages keep coming: a world stepping faster
    // than that (RTF 50 at 1 ms steps) hands over ~50 messages per wake-up instead of waking
    // this thread for each, and a latest-only channel (the clock) sends one per batch.
    if (busy) std::this_thread::sleep_until(batch_start + kMinBatchPeriod);
  }
}

}  // namespace kestrel::transport::detail
