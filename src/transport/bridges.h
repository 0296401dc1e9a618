#pragma once
// Private to src/transport: components <-> topics (src/transport/README.md).
//   in:  ignition::msgs::Actuators on ActuatorCommandTopic  -> ActuatorCommands
//        ignition::msgs::Twist     on TwistCommandTopic     -> TwistCommand
//        ignition::msgs::Boolean   on VelocityControlEnableTopic -> VelocityControlEnable
//        ignition::msgs::StringMsg on MissionCommandTopic   -> MissionCommand (mission text)
//        ignition::msgs::StringMsg on FaultCommandTopic     -> FaultCommand (fault text)
//        ignition::msgs::Boolean   on BatteryRechargeTopic start/stop -> BatteryRecharge
//        any message type          on BatteryDrainTopics start/stop -> BatteryDrainCommand
//   out: RotorVelocities -> ignition::msgs::Actuators on RotorVelocityTopic (+ per rotor Double)
//        Battery         -> ignition::msgs::BatteryState on BatteryTopic (status CHARGING,
//                           FULL, DISCHARGING or NOT_CHARGING)
//        MissionState    -> ignition::msgs::StringMsg on MissionStateTopic, when its phase,
//                           item or waypoint changes
// Incoming messages are applied at the next step boundary (Runner::post), so a run is
// deterministic for a given sequence of applied commands. A message replaced by a newer one
// before it was applied is counted as dropped.

#include <map>
#include <memory>
#include <set>
#include <string>

#include "kestrel/ecs/registry.h"
#include "kestrel/sim/runner.h"
#include "transport/common.h"

namespace kestrel::transport::detail {

class Outbox;

class Bridges {
 public:
  Bridges(sim::Runner& runner, ignition::transport::Node& node, Counters& counters, Outbox& outbox);
  ~Bridges();
  /// Subscribes the command topics present at configure time.
  void configure(const ecs::Registry& registry);
  /// Publishes the outputs; picks up topic components added since the last call.
  void post_update(const UpdateInfo& info, const ecs::Registry& registry);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Publishes sensor readings (components/sensors.h) on their SensorTopic when their sequence
/// advances: IMU, Magnetometer, FluidPressure, Altimeter, NavSat, Wrench, Contacts (header data
/// "frame_id" = the sensor's scoped name). sensor_bridges.cc.
class SensorPublisher {
 public:
  explicit SensorPublisher(Outbox& outbox);
  ~SensorPublisher();
  void post_update(const ecs::Registry& registry);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::transport::detail
