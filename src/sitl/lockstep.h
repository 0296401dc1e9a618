#pragma once
// The lockstep contract both bridges keep: sim time advances only on the autopilot's
// answers, and no wall-clock limit acts unless the user set one. What they share is how they
// wait on the wall clock: a wait that says every kWaitReport that it still waits, that ends
// at once when the run is stopped (SIGINT/SIGTERM through Runner::stop()), and that ends at a
// limit only when the user gave one.

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>

#include "kestrel/core/element.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/event_bus.h"
#include "kestrel/sim/stop_signal.h"

namespace kestrel::sitl {

using WallClock = std::chrono::steady_clock;

/// How often a waiting bridge says that it still waits (wall clock).
inline constexpr std::chrono::seconds kWaitReport{5};

/// A bridge's wall-clock limits; unset: wait as long as it takes.
struct LockstepLimits {
  std::optional<double> connect_s;  ///< waiting for the autopilot to connect or reconnect [s]
  std::optional<double> answer_s;   ///< waiting for one answer; then run on without it [s]

  /// <connect_timeout> and <answer_timeout> of `cfg` (each > 0 s when given), overridden by the
  /// world's components::SitlTimeouts. @throws Error naming `who` for a value <= 0, and for the
  /// parameters these replaced (<lockstep_timeout>, <wait_for_px4>), saying what to write.
  static LockstepLimits read(const Element& cfg, const ecs::Registry& reg, ecs::Entity world,
                             const std::string& who);
};

/// The Runner's stop signal (null without a Runner): ask once, at configure.
const sim::StopSignal* stop_signal_of(sim::EventBus& events);

/// One blocking wait on the wall clock.
class Wait {
 public:
  enum class Event { kReadable, kReport, kExpired };
  /// @param limit_s end the wait after this long (unset: never)
  Wait(const sim::StopSignal* stop, std::optional<double> limit_s);
  /// Blocks until one of `fds` (negative ones are ignored) is readable, the next report is due
  /// (every kWaitReport since the start) or the limit has passed. After kReadable, readable(i)
  /// says whether fds[i] was. @throws sim::StepInterrupted once the stop signal is raised.
  Event next(std::initializer_list<int> fds);
  bool readable(std::size_t i) const { return (readable_ >> i) & 1u; }
  /// Wall time since the wait started [s].
  double waited_s() const;

 private:
  const sim::StopSignal* stop_;
  WallClock::time_point start_, next_report_;
  std::optional<WallClock::time_point> deadline_;
  unsigned readable_ = 0;
};

}  // namespace kestrel::sitl
