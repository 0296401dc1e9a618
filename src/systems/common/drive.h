#pragma once
// What the ground-vehicle systems (DiffDrive, AckermannSteering, MecanumDrive, TrackedVehicle,
// TrackController, VelocityControl, OdometryPublisher, PosePublisher, TrajectoryFollower) share:
// Gazebo's speed limits, its odometry publication schedule, the model's topics and the
// TopicInputs / TopicOutputs entries they own (include/kestrel/components/messages.h).

#include <chrono>
#include <cstddef>
#include <ignition/math/DiffDriveOdometry.hh>
#include <ignition/math/SpeedLimiter.hh>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/components/messages.h"
#include "kestrel/core/element.h"
#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::systems {

/// The model `entity` a drive plugin is attached to. @throws Error at config's FILE:LINE if it
/// is not a model (Gazebo: "should be attached to a model entity").
ecs::Entity require_model(const ecs::Registry& r, ecs::Entity entity, const Element& config,
                          std::string_view system);

/// "/model/<model name>/<suffix>" (Gazebo's default topics; the model's own name, not scoped).
std::string model_topic(const ecs::Registry& r, ecs::Entity model, std::string_view suffix);

/// The name of the model's canonical link (its first link, as Physics takes it), or "".
std::string canonical_link_name(const ecs::Registry& r, ecs::Entity model);

/// The joints named by every `<parameter>` child (at least one), each looked up under `model`
/// (find_joint) and required to have one axis (revolute, continuous or prismatic): a wheel.
std::vector<ecs::Entity> wheel_joints(const ecs::Registry& r, ecs::Entity model,
                                      const Element& config, std::string_view parameter);

/// Reads the limits of one ignition::math::SpeedLimiter from `config`: `<min_NAME>` and
/// `<max_NAME>` for NAME = `velocity`, `acceleration`, `jerk` (with `infix`, e.g. "linear_":
/// `<min_linear_velocity>`...). Only what is given is set (the rest stays unlimited).
/// @throws Error if a value is not finite or a minimum exceeds its maximum.
void read_speed_limits(const Element& config, std::string_view infix,
                       ignition::math::SpeedLimiter& limiter);

/// The limiters' memory of a drive's last two limited commands (linear and angular).
struct TwistHistory {
  double lin0 = 0, lin1 = 0, ang0 = 0, ang1 = 0;
};

/// Gazebo's drive limiting (DiffDrive, AckermannSteering): `lin` and `ang` through their
/// SpeedLimiters with the last two commands, then the history moves on by one.
void limit_twist(const ignition::math::SpeedLimiter& linear,
                 const ignition::math::SpeedLimiter& angular, TwistHistory& h, double& lin,
                 double& ang, Duration dt);

/// Gazebo's odometry output of a drive plugin: `<odom_topic>` (default
/// /model/<model>/odometry), `<tf_topic>` (/model/<model>/tf), `<frame_id>` (<model>/odom),
/// `<child_frame_id>` (<model>/<canonical link>; none without a link). Returns its
/// TopicOutputs index.
std::size_t add_drive_odometry(ecs::Registry& r, ecs::Entity model, const Element& config);

/// Gazebo's period for a publication frequency [Hz]: duration<double>(1 / f) cast to the
/// clock's nanoseconds; 0 (every step) when `frequency` is 0. @throws Error at the parameter's
/// line if it is negative or not finite.
Duration publish_period(const Element& config, std::string_view parameter, double fallback);

/// Gazebo's publication schedule (DiffDrive, OdometryPublisher, PosePublisher...): at sim time
/// `now` (Gazebo's simTime: the end of the step) a message is due unless 0 < now − last <
/// period; when due, `last` becomes `now`.
struct PublishSchedule {
  Duration period{0};
  Duration last{0};
  bool due(Duration now) {
    const Duration diff = now - last;
    if (diff > Duration{0} && diff < period) return false;
    last = now;
    return true;
  }
};

/// Gazebo's odometry step of a differential drive (DiffDrive, TrackedVehicle) at sim time `now`:
/// the first call initialises `odometry`; later ones update it with the wheels' angles [rad]
/// and, when `schedule` says a message is due, write its pose and speeds into the model's
/// odometry output `index` (add_drive_odometry).
void update_drive_odometry(ecs::Registry& r, ecs::Entity model, std::size_t index,
                           ignition::math::DiffDriveOdometry& odometry, double left, double right,
                           Duration now, PublishSchedule& schedule);

/// The steady_clock time point of sim time `t` (what Gazebo hands ignition-math's odometry).
inline std::chrono::steady_clock::time_point time_point(Duration t) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(t));
}

/// Appends an input entry for `topic` to the entity's TopicInputs (added when absent) and
/// returns its index.
std::size_t add_twist_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_bool_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_double_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_vector3_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_int32_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_actuators_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_bool_service_input(ecs::Registry& r, ecs::Entity e, std::string service);
std::size_t add_entity_wrench_input(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_entity_input(ecs::Registry& r, ecs::Entity e, std::string topic);
/// Appends an output entry to the entity's TopicOutputs and returns its index.
std::size_t add_odometry_output(ecs::Registry& r, ecs::Entity e, components::OdometryOutput o);
std::size_t add_poses_output(ecs::Registry& r, ecs::Entity e, components::PosesOutput o);
std::size_t add_double_output(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_bool_output(ecs::Registry& r, ecs::Entity e, std::string topic);
std::size_t add_joint_state_output(ecs::Registry& r, ecs::Entity e, std::string topic);

/// Sets the joint's velocity command [rad/s or m/s] for this step (JointVelocityCmd).
void command_joint_velocity(ecs::Registry& r, ecs::Entity joint, double velocity);

/// The first axis position of a joint (JointPosition), or `fallback` before Physics wrote it.
double joint_position(const ecs::Registry& r, ecs::Entity joint, double fallback = 0);

}  // namespace kestrel::systems
