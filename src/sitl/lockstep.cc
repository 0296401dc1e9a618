#include "sitl/lockstep.h"

#include <errno.h>
#include <fmt/core.h>
#include <poll.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kestrel/components/sitl.h"

namespace kestrel::sitl {

LockstepLimits LockstepLimits::read(const Element& cfg, const ecs::Registry& reg, ecs::Entity world,
                                    const std::string& who) {
  for (const auto& [old, now] : {std::pair{"lockstep_timeout", "answer_timeout"},
                                 std::pair{"wait_for_px4", "connect_timeout"}}) {
    if (cfg.has(old)) {
      throw Error(cfg.child(old)->where(),
                  fmt::format("{}: <{}> was replaced: the world now waits for the autopilot as "
                              "long as it takes; write <{}> (seconds of wall clock) to bound the "
                              "wait (src/sitl/README.md, \"Lockstep\")",
                              who, old, now));
    }
  }
  LockstepLimits l;
  auto take = [&](const char* name, std::optional<double>& out) {
    if (!cfg.has(name)) return;
    const double v = cfg.get<double>(name);
    if (!(v > 0) || !std::isfinite(v)) {
      throw Error(cfg.child(name)->where(),
                  fmt::format("{}: <{}> must be a number of seconds > 0 (found {}); leave it out "
                              "to wait as long as it takes",
                              who, name, v));
    }
    out = v;
  };
  take("connect_timeout", l.connect_s);
  take("answer_timeout", l.answer_s);
  if (const auto* t = reg.try_get<components::SitlTimeouts>(world)) {
    if (t->connect_s) l.connect_s = t->connect_s;
    if (t->answer_s) l.answer_s = t->answer_s;
  }
  return l;
}

const sim::StopSignal* stop_signal_of(sim::EventBus& events) {
  const sim::StopSignal* s = nullptr;
  events.publish(sim::StopSignalRequest{&s});
  return s;
}

Wait::Wait(const sim::StopSignal* stop, std::optional<double> limit_s)
    : stop_(stop), start_(WallClock::now()), next_report_(start_ + kWaitReport) {
  if (limit_s) {
    deadline_ = start_ + std::chrono::duration_cast<WallClock::duration>(
                             std::chrono::duration<double>(*limit_s));
  }
}

Wait::Event Wait::next(std::initializer_list<int> fds) {
  // p[0] is the stop signal (-1, ignored by poll, without one); p[1 + i] is fds[i].
  std::array<pollfd, 4> p{};
  std::size_t n = 0;
  p[n++] = {stop_ ? stop_->fd() : -1, POLLIN, 0};
  for (int fd : fds) {
    if (n < p.size()) p[n++] = {fd, POLLIN, 0};
  }
  readable_ = 0;
  for (;;) {
    if (stop_ && stop_->raised()) throw sim::StepInterrupted();
    const auto now = WallClock::now();
    if (deadline_ && now >= *deadline_) return Event::kExpired;
    if (now >= next_report_) {
      next_report_ += kWaitReport;
      return Event::kReport;
    }
    const auto until = deadline_ ? std::min(*deadline_, next_report_) : next_report_;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
    const int r = ::poll(p.data(), n, static_cast<int>(std::max<long>(1, ms)));
    if (r < 0 && errno != EINTR) {  // let the caller's reads see why
      readable_ = ~0u;
      return Event::kReadable;
    }
    if (r <= 0) continue;
    if (p[0].revents & POLLIN) throw sim::StepInterrupted();
    for (std::size_t i = 1; i < n; ++i) {
      if (p[i].revents) readable_ |= 1u << (i - 1);  // POLLIN, or POLLHUP/POLLERR to read
    }
    return Event::kReadable;
  }
}

double Wait::waited_s() const {
  return std::chrono::duration<double>(WallClock::now() - start_).count();
}

}  // namespace kestrel::sitl
