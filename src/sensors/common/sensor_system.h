#pragma once
// What every sensor system shares: finding its sensors, the sample schedule in integer sim
// time, injected faults (components::SensorFault), the default scoped topic, the sensor's
// kinematic state from its link, strict parameter checks, and exact reset (instances are copied
// after configure and restored on reset).

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/core/element.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/events.h"
#include "kestrel/system.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {

/// X_AC from X_AB and X_BC (spelled out: ignition-math 6's operator* composes differently).
inline ignition::math::Pose3d compose(const ignition::math::Pose3d& X_AB,
                                      const ignition::math::Pose3d& X_BC) {
  return ignition::math::Pose3d(X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()),
                                X_AB.Rot() * X_BC.Rot());
}

/// When sample n (1, 2, ...) is due: the first state time >= n / rate, from n in integer ns.
class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(double rate_hz) : rate_(rate_hz) {}
  /// True if a sample is due at state time t.
  bool due(Duration t) const { return rate_ <= 0 || t >= due_time(n_); }
  /// Records a sample at t: the next one is the first n whose time is after t.
  void taken(Duration t);
  /// Time since the previous sample (or since 0 for the first) [s].
  double since_last_s(Duration t) const { return to_seconds(t - last_); }
  Duration due_time(std::uint64_t n) const;
  double rate() const { return rate_; }

 private:
  double rate_ = 0;
  std::uint64_t n_ = 1;
  Duration last_{0};
};

/// A scoped name without its world ("w::model::link::sensor" → "model::link::sensor"): the
/// frame_id and model names Gazebo's rendering sensors publish.
inline std::string without_world(const std::string& scoped) {
  const auto p = scoped.find("::");
  return p == std::string::npos ? scoped : scoped.substr(p + 2);
}

/// Gazebo's default topic `/world/W/model/M/link/L/sensor/S/<suffix>` (nested models and joints
/// included), or the sensor's <topic> when set. @throws Error on a placeholder topic.
std::string resolve_topic(const ecs::Registry& r, ecs::Entity sensor,
                          const components::Sensor& data, std::string_view suffix);

/// Kinematic state of a frame rigidly attached to a link (world frame, ENU).
struct FrameState {
  ignition::math::Pose3d X_WS;       ///< pose of the frame in the world
  ignition::math::Vector3d v_W;      ///< velocity of the frame origin [m/s]
  ignition::math::Vector3d w_W;      ///< angular velocity [rad/s]
  ignition::math::Vector3d a_W;      ///< acceleration of the frame origin (gravity not removed),
                                     ///< including α×r + ω×(ω×r) [m/s²]
  ignition::math::Vector3d alpha_W;  ///< angular acceleration [rad/s²]
};

/// The state of frame X_LS on `link` from the link's physics components (absent ones, e.g. on a
/// static link, count as zero; WorldPose is required).
FrameState frame_state(const ecs::Registry& r, ecs::Entity link,
                       const ignition::math::Pose3d& X_LS);

/// Throws Error naming the first unread children of `e` (a misspelled parameter).
void reject_unread(const Element& e, std::string_view expected);

/// Checks the <sensor> element's own children: the common ones and `type_element` are allowed,
/// anything else is an Error. Returns the type element (<imu>...), or nullptr when absent.
const Element* sensor_type_element(const Element& sensor, std::string_view type_element);

/// Everything a sensor system is given when one of its sensors appears.
struct SensorContext {
  ecs::Entity entity = ecs::kNullEntity;  ///< the sensor entity
  ecs::Entity parent = ecs::kNullEntity;  ///< its link (joint for force_torque)
  ecs::Entity world = ecs::kNullEntity;   ///< the world entity
  std::string scoped_name;                ///< "world::model::link::sensor"
  std::uint64_t world_seed = 0;
  ignition::math::Pose3d X_PS;  ///< sensor pose in its parent entity
  const components::Sensor* sensor = nullptr;
};

/// Base of each sensor system. `Instance` holds one sensor's state and must have members
/// `ecs::Entity entity` and `Schedule schedule`; `Reading` is the sensor's reading component.
/// Derived systems implement serves(), make(), sample() and, when their type takes a bias
/// (components::sensor_fault_target), add_bias(); a sensor whose measurement is expensive (the
/// rendering sensors) may override skip(). Runs in Update at kPostPhysicsSensors, after Physics
/// (see components/sensors.h).
///
/// Every sample goes through update(), the one place where components::SensorFault acts: a
/// stopped sensor's sample is skip()ped — everything a sample advances (noise streams, frame
/// counters) advances, nothing is stored or published; otherwise the sample is computed with
/// the fault's noise scale, the bias is added, a GNSS loss blanks the fix, and the reading is
/// stamped, counted and marked changed.
template <class Instance, class Reading>
class SensorSystem : public System,
                     public ISystemConfigure,
                     public ISystemUpdate,
                     public ISystemReset {
 public:
  int priority() const override { return priority::kPostPhysicsSensors; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& registry,
                 sim::EventBus& events) override {
    reject_unread(config, "this system has no parameters");
    world_ = entity;
    while (world_ != ecs::kNullEntity && !registry.has<components::World>(world_)) {
      world_ = registry.parent(world_);
    }
    if (world_ == ecs::kNullEntity) {
      throw Error(registry.describe(entity), "a sensor system must be attached to a world");
    }
    registry.each<components::Sensor>([&](ecs::Entity e, components::Sensor& s) {
      if (serves(s.type)) adopt(e, registry);
    });
    initial_ = instances_;
    // A run-time seed change (sim::Runner::set_seed): noise restarts from the new seed.
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this](const sim::WorldSeedChanged& e) { reseed(*e.initial_state); });
  }

  void update(const UpdateInfo& info, ecs::Registry& registry) override {
    if (info.dt <= Duration{0}) return;
    registry.each_new<components::Sensor>([&](ecs::Entity e, components::Sensor& s) {
      if (serves(s.type) && !known(e)) adopt(e, registry);
    });
    const Duration t = info.sim_time + info.dt;  // the state physics just produced
    for (auto& inst : instances_) {
      if (!inst.schedule.due(t) || !registry.alive(inst.entity) ||
          registry.removal_pending(inst.entity)) {
        continue;
      }
      const auto* found = registry.try_get<components::SensorFault>(inst.entity);
      const components::SensorFault fault = found ? *found : components::SensorFault{};
      const NoiseStep step{inst.schedule.since_last_s(t), fault.noise_scale};
      if (fault.stopped) {
        skip(inst, t, step, std::as_const(registry));
        inst.schedule.taken(t);
        continue;
      }
      Reading& out = registry.get<Reading>(inst.entity);
      sample(inst, t, step, std::as_const(registry), out);
      inst.schedule.taken(t);
      // (Exact test: ignition's Vector3 == has a 1e-3 tolerance, which would drop a bias in T.)
      const auto& b = fault.bias;
      if (b.X() != 0 || b.Y() != 0 || b.Z() != 0) add_bias(inst, b, out);
      if constexpr (requires(Reading & x) { x.fix; }) {
        out.fix = !fault.no_fix;
        if (fault.no_fix) lose_fix(out);
      }
      out.stamp = t;
      ++out.sequence;
      registry.template mark_changed<Reading>(inst.entity, ecs::ComponentState::kPeriodic);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { instances_ = initial_; }

  const std::vector<Instance>& instances() const { return instances_; }

 protected:
  virtual bool serves(std::string_view type) const = 0;
  /// Creates the instance and adds SensorTopic and the reading component. Throws on bad SDF.
  virtual Instance make(const SensorContext& ctx, ecs::Registry& registry) = 0;
  /// Computes the measurement of one sample at state time t into `out` (which holds the
  /// previous reading), every noise channel advanced by `step`. Leaves stamp and sequence alone.
  virtual void sample(Instance& inst, Duration t, NoiseStep step, const ecs::Registry& registry,
                      Reading& out) = 0;
  /// A sample of a stopped sensor at state time t: advances every random stream and counter
  /// exactly as sample() would, so that the samples after the fault equal an unfaulted run's;
  /// stores nothing. By default the sample is computed into a copy that is thrown away.
  virtual void skip(Instance& inst, Duration t, NoiseStep step, const ecs::Registry& registry) {
    scratch_ = registry.get<Reading>(inst.entity);
    sample(inst, t, step, registry, scratch_);
  }
  /// Adds a fault's bias to the sample just taken, to the quantity
  /// components::sensor_fault_target names for the type (FaultInjection has checked its size).
  virtual void add_bias(Instance&, const ignition::math::Vector3d&, Reading&) {
    KESTREL_DEMAND(false && "this sensor type takes no bias (FaultInjection refuses one)");
  }

  ecs::Entity world() const { return world_; }

 private:
  // A GNSS sample without a fix carries no position or velocity.
  static void lose_fix(Reading& out) {
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    out.latitude_deg = out.longitude_deg = out.altitude = kNone;
    out.velocity_enu.Set(kNone, kNone, kNone);
  }

  bool known(ecs::Entity e) const {
    for (const auto& i : instances_) {
      if (i.entity == e) return true;
    }
    return false;
  }
  void adopt(ecs::Entity e, ecs::Registry& registry) { instances_.push_back(build(e, registry)); }
  // Each sensor present at configure is made again from that state with the new seed (same
  // references, fresh noise streams), keeping its schedule. Sensors spawned later keep theirs.
  void reseed(ecs::Registry& initial_state) {
    for (auto& inst : instances_) {
      if (!initial_state.alive(inst.entity) ||
          !initial_state.has<components::Sensor>(inst.entity)) {
        continue;
      }
      Instance fresh = build(inst.entity, initial_state);
      fresh.schedule = inst.schedule;
      inst = std::move(fresh);
    }
  }
  Instance build(ecs::Entity e, ecs::Registry& registry) {
    SensorContext ctx;
    ctx.entity = e;
    ctx.parent = registry.parent(e);
    ctx.world = world_;
    ctx.scoped_name = registry.scoped_name(e);
    if (const auto* seed = registry.try_get<components::WorldSeed>(world_)) {
      ctx.world_seed = seed->value;
    }
    if (const auto* p = registry.try_get<components::Pose>(e)) ctx.X_PS = p->value;
    ctx.sensor = &registry.get<components::Sensor>(e);
    if (!ctx.sensor->element) {
      throw Error(registry.describe(e), "sensor has no SDF element to read its parameters from");
    }
    Instance inst = make(ctx, registry);
    inst.entity = e;
    inst.schedule = Schedule(ctx.sensor->update_rate);
    return inst;
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::vector<Instance> instances_, initial_;
  Reading scratch_;  // where a stopped sensor's samples go
  sim::EventBus::Subscription reseed_;
};

}  // namespace kestrel::sensors
