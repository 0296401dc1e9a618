#pragma once
// The clock an autopilot sees. PX4 (HIL time_usec is its lockstep clock) and ArduPilot (the
// JSON timestamp) cannot follow a clock that goes backwards, but a world reset takes sim time
// back to 0. So the autopilot's time is sim time plus an offset that grows at each reset: after
// a reset it continues from the last time sent, as if the reset took no time.

#include "kestrel/core/time.h"

namespace kestrel::sitl {

class AutopilotClock {
 public:
  /// The autopilot's time for sim time `t`: t + offset. When `t` is earlier than the sim time
  /// of the previous call (the world was reset, fully or time only), the offset first becomes
  /// the previous result, so the result still increases (for t > 0).
  Duration at(Duration t) {
    if (t < last_sim_) {
      offset_ = last_;
      ++jumps_;
    }
    last_sim_ = t;
    last_ = t + offset_;
    return last_;
  }
  /// Sim time and autopilot time of the previous call.
  Duration last_sim() const { return last_sim_; }
  Duration last() const { return last_; }
  /// The current offset (0 until the first reset).
  Duration offset() const { return offset_; }
  /// How many times sim time went back.
  int jumps() const { return jumps_; }

 private:
  Duration offset_{0}, last_sim_{0}, last_{0};
  int jumps_ = 0;
};

}  // namespace kestrel::sitl
