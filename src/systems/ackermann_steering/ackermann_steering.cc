// AckermannSteering: gz-sim's (Fortress) Ackermann steering. A twist (linear.x, angular.z)
// goes through Gazebo's speed limiter and becomes a turning radius R = v / ω, bounded below by
// the minimum wheel_base / sin(steering_limit); the steering joints are steered towards
// atan(L / (R ∓ kingpin_width / 2)) by commanding their velocity = angle error [rad → rad/s]
// (Gazebo's gain of 1 /s), the wheels turn at v (1 ∓ separation·tan φ / (2 L)) / r with
// φ = atan(L / R). Odometry integrates the first wheel and steering joints' positions (the
// bicycle model on their mean steering angle) and is published at odom_publish_frequency.

#include "ackermann_steering/ackermann_steering.h"

#include <fmt/format.h>

#include <cmath>
#include <ignition/math/Angle.hh>
#include <ignition/math/Quaternion.hh>
#include <ignition/math/SpeedLimiter.hh>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kParams =
    "left_joint, right_joint, left_steering_joint, right_steering_joint, wheel_separation, "
    "kingpin_width, wheel_base, steering_limit, wheel_radius, topic, odom_topic, tf_topic, "
    "frame_id, child_frame_id, odom_publish_frequency, {min,max}_{velocity,acceleration,jerk}";

class AckermannSteering final : public System,
                                public ISystemConfigure,
                                public ISystemPreUpdate,
                                public ISystemUpdate,
                                public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "AckermannSteering");
    left_ = wheel_joints(r, model_, config, "left_joint");
    right_ = wheel_joints(r, model_, config, "right_joint");
    left_steer_ = wheel_joints(r, model_, config, "left_steering_joint");
    right_steer_ = wheel_joints(r, model_, config, "right_steering_joint");
    separation_ = get_positive_or(config, "wheel_separation", 1.0);
    kingpin_ = get_positive_or(config, "kingpin_width", 0.8);
    wheel_base_ = get_positive_or(config, "wheel_base", 1.0);
    steering_limit_ = get_positive_or(config, "steering_limit", 0.5);
    radius_ = get_positive_or(config, "wheel_radius", 0.2);
    // Fortress reads only the generic limits, for both the linear and the angular command.
    read_speed_limits(config, "", limit_lin_);
    read_speed_limits(config, "", limit_ang_);
    schedule_.period = publish_period(config, "odom_publish_frequency", 50);
    cmd_ = add_twist_input(r, model_,
                           config.get_or<std::string>("topic", model_topic(r, model_, "cmd_vel")));
    odom_ = add_drive_odometry(r, model_, config);
    reject_unknown_parameters(config, "AckermannSteering", kParams);
    reset_state();
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    for (ecs::Entity j : left_) command_joint_velocity(r, j, s_.left_speed);
    for (ecs::Entity j : right_) command_joint_velocity(r, j, s_.right_speed);
    for (ecs::Entity j : left_steer_) command_joint_velocity(r, j, s_.left_steer_speed);
    for (ecs::Entity j : right_steer_) command_joint_velocity(r, j, s_.right_steer_speed);
  }

  // Gazebo's PostUpdate (after Physics): UpdateVelocity, then UpdateOdometry.
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    const Duration now = info.sim_time + info.dt;
    if (const auto& t = r.get<c::TopicInputs>(model_).twist[cmd_]; t.count != s_.cmd_seen) {
      s_.cmd_seen = t.count;
      s_.target_lin = t.linear.X();
      s_.target_ang = t.angular.Z();
    }
    update_velocity(info, r);
    update_odometry(now, r);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  void update_velocity(const UpdateInfo& info, const ecs::Registry& r) {
    double lin = s_.target_lin, ang = s_.target_ang;
    limit_twist(limit_lin_, limit_ang_, s_.history, lin, ang, info.dt);
    double turning = lin / ang;
    const double minimum = wheel_base_ / std::sin(steering_limit_);
    if (std::fabs(lin) > 0.0) {
      if (turning >= 0.0 && turning < minimum) turning = minimum;
      if (turning <= 0.0 && turning > -minimum) turning = -minimum;
    } else if (std::fabs(ang) >= 0.001) {
      turning = (ang / std::fabs(ang)) * minimum;
    }
    if (std::fabs(ang) < 0.001) turning = 1000000000.0;
    const double left_angle = std::atan(wheel_base_ / (turning - kingpin_ / 2.0));
    const double right_angle = std::atan(wheel_base_ / (turning + kingpin_ / 2.0));
    const double phi = std::atan(wheel_base_ / turning);
    s_.right_speed = (lin * (1.0 + (separation_ * std::tan(phi)) / (2.0 * wheel_base_))) / radius_;
    s_.left_speed = (lin * (1.0 - (separation_ * std::tan(phi)) / (2.0 * wheel_base_))) / radius_;
    s_.left_steer_speed = left_angle - joint_position(r, left_steer_.front());
    s_.right_steer_speed = right_angle - joint_position(r, right_steer_.front());
  }

  void update_odometry(Duration now, ecs::Registry& r) {
    const double left = joint_position(r, left_.front());
    const double right = joint_position(r, right_.front());
    const double phi =
        0.5 * (joint_position(r, left_steer_.front()) + joint_position(r, right_steer_.front()));
    const double turning = wheel_base_ / std::tan(phi);
    const double dist = 0.5 * radius_ * ((left - s_.odom_old_left) + (right - s_.odom_old_right));
    const double delta = dist / turning;
    s_.odom_yaw = ignition::math::Angle(s_.odom_yaw + delta).Normalized().Radian();
    s_.odom_x += dist * std::cos(s_.odom_yaw);
    s_.odom_y += dist * std::sin(s_.odom_yaw);
    const double tdiff = to_seconds(now - s_.last_odom_time);
    const double lin = dist / tdiff, ang = delta / tdiff;
    s_.last_odom_time = now;
    s_.odom_old_left = left;
    s_.odom_old_right = right;
    if (!schedule_.due(now)) return;
    auto& o = r.get<c::TopicOutputs>(model_).odometry[odom_];
    o.stamp = now;
    o.pose = ignition::math::Pose3d(ignition::math::Vector3d(s_.odom_x, s_.odom_y, 0),
                                    ignition::math::Quaterniond(0, 0, s_.odom_yaw));
    o.linear.Set(lin, 0, 0);
    o.angular.Set(0, 0, ang);
    ++o.sequence;
  }

  void reset_state() {
    s_ = State{};
    schedule_.last = Duration{0};
  }

  struct State {
    double left_speed = 0, right_speed = 0, left_steer_speed = 0, right_steer_speed = 0;
    double target_lin = 0, target_ang = 0;
    TwistHistory history;  // the limiters' last two commands
    double odom_x = 0, odom_y = 0, odom_yaw = 0, odom_old_left = 0, odom_old_right = 0;
    Duration last_odom_time{0};
    std::uint64_t cmd_seen = 0;
  };

  ecs::Entity model_ = ecs::kNullEntity;
  std::vector<ecs::Entity> left_, right_, left_steer_, right_steer_;
  double separation_ = 1.0, kingpin_ = 0.8, wheel_base_ = 1.0, steering_limit_ = 0.5, radius_ = 0.2;
  ignition::math::SpeedLimiter limit_lin_, limit_ang_;
  std::size_t cmd_ = 0, odom_ = 0;
  PublishSchedule schedule_;
  State s_;
};

}  // namespace

std::unique_ptr<System> make_ackermann_steering() { return std::make_unique<AckermannSteering>(); }

}  // namespace kestrel::systems
