#pragma once
// Private to src/transport: what the transport systems share. Includes ignition-transport and
// the few light message headers every file needs (time, pose).

#include <ignition/msgs/header.pb.h>
#include <ignition/msgs/pose.pb.h>
#include <ignition/msgs/time.pb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <future>
#include <ignition/math/Pose3.hh>
#include <ignition/transport/Node.hh>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kestrel/core/time.h"
#include "kestrel/sim/runner.h"

namespace kestrel::transport::detail {

class Outbox;  // outbox.h

/// Counters shown in the stats header (drops are counted and visible).
struct Counters {
  std::atomic<std::uint64_t> dropped{0};             ///< incoming messages dropped (queue full)
  std::atomic<std::uint64_t> publish_failures{0};    ///< Publish() returned false
  std::atomic<std::uint64_t> rejected_requests{0};   ///< service requests answered false
  std::atomic<std::uint64_t> subscribe_failures{0};  ///< Subscribe() returned false
  /// Older clock messages skipped because a newer one was queued in the same Outbox batch.
  std::atomic<std::uint64_t> conflated{0};
};

/// Published on the world's EventBus by the world transport system in configure (after every
/// configure_priority ran), so that UserCommands and SceneBroadcaster, which subscribe in
/// configure_priority, get the runner and the world's topic prefix. Each system owns its own
/// Node (destroyed with the system, so no callback outlives its object).
struct TransportReady {
  sim::Runner* runner = nullptr;
  std::string world;   ///< world name as it appears in topics
  std::string prefix;  ///< "/world/<world>"
  std::chrono::milliseconds request_timeout{3000};
  Counters* counters = nullptr;
  std::shared_ptr<Outbox> outbox;  ///< publish through it, never from the step thread directly
};

/// Runs fn(runner) on the step thread at the next step boundary and waits for its result.
/// Returns nullopt if the step thread did not start it within `timeout` (the world stopped);
/// then fn never runs, so a request that timed out changes nothing.
template <class R>
std::optional<R> on_step_thread(sim::Runner& runner, std::function<R(sim::Runner&)> fn,
                                std::chrono::milliseconds timeout) {
  struct State {
    std::mutex m;
    bool started = false, cancelled = false;
    std::promise<R> promise;
  };
  auto state = std::make_shared<State>();
  auto future = state->promise.get_future();
  runner.post([state, fn = std::move(fn)](sim::Runner& r) {
    {
      std::lock_guard lock(state->m);
      if (state->cancelled) return;
      state->started = true;
    }
    try {
      state->promise.set_value(fn(r));
    } catch (...) {
      state->promise.set_exception(std::current_exception());
    }
  });
  if (future.wait_for(timeout) != std::future_status::ready) {
    std::lock_guard lock(state->m);
    if (!state->started) {
      state->cancelled = true;
      return std::nullopt;
    }
  }
  return future.get();  // started: wait for it to finish
}

// ---- conversions -----------------------------------------------------------------------------

inline void to_msg(Duration d, ignition::msgs::Time* t) {
  const auto ns = d.count();
  auto sec = ns / 1'000'000'000;
  auto nsec = ns % 1'000'000'000;
  if (nsec < 0) {
    nsec += 1'000'000'000;
    --sec;
  }
  t->set_sec(sec);
  t->set_nsec(static_cast<std::int32_t>(nsec));
}

inline Duration from_msg(const ignition::msgs::Time& t) {
  return Duration{t.sec() * 1'000'000'000 + t.nsec()};
}

inline void to_msg(const ignition::math::Pose3d& p, ignition::msgs::Pose* m) {
  auto* pos = m->mutable_position();
  pos->set_x(p.Pos().X());
  pos->set_y(p.Pos().Y());
  pos->set_z(p.Pos().Z());
  auto* q = m->mutable_orientation();
  q->set_w(p.Rot().W());
  q->set_x(p.Rot().X());
  q->set_y(p.Rot().Y());
  q->set_z(p.Rot().Z());
}

/// Pose from a message; an absent orientation (all zero) is the identity, as Gazebo reads it.
/// The orientation is scaled by its largest component before it is normalised, so a finite
/// quaternion of any size is the rotation it names (normalising (0, 1.5, 0, 1e185) directly
/// overflows its norm to infinity and gives the zero quaternion, which physics cannot use); a
/// component that is not finite stays in the pose for the caller's check to refuse.
inline ignition::math::Pose3d from_msg(const ignition::msgs::Pose& m) {
  ignition::math::Pose3d p;
  p.Pos().Set(m.position().x(), m.position().y(), m.position().z());
  const auto& q = m.orientation();
  if (m.has_orientation() && (q.w() != 0 || q.x() != 0 || q.y() != 0 || q.z() != 0)) {
    ignition::math::Quaterniond r(q.w(), q.x(), q.y(), q.z());
    const double big =
        std::max({std::abs(q.w()), std::abs(q.x()), std::abs(q.y()), std::abs(q.z())});
    if (std::isfinite(big)) {
      r.Set(q.w() / big, q.x() / big, q.y() / big, q.z() / big);
      r.Normalize();
    }
    p.Rot() = r;
  }
  return p;
}

/// Sets header.stamp to sim time `t`.
inline void stamp(ignition::msgs::Header* h, Duration t) { to_msg(t, h->mutable_stamp()); }

/// One warning through the log sink, "warning: transport: <what>" (requests that fail, drops).
void log_line(const std::string& what);

}  // namespace kestrel::transport::detail
