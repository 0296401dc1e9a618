#pragma once
/// @file How a system asks the Runner to pace the world differently (systems talk through
/// components, and the Runner reads this one after every step — as gz-sim's runner reads
/// the world's physics command component for its real-time factor).

namespace kestrel::components {

/// On any entity (a system puts it on the entity it serves): while `active` is true, the Runner
/// paces the world at real time (RTF 1) whatever its real-time factor (`--rtf`, <physics>);
/// when no entity's is active, the world's own factor applies again. The SITL bridges set it
/// while their autopilot boots ("freewheeling": sensors stream, no actuator answer yet) so that
/// the autopilot's start-up timers see sane time (src/sitl/README.md).
struct RealTimePacing {
  bool active = false;
};

}  // namespace kestrel::components
