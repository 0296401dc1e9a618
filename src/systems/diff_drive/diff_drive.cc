// DiffDrive: gz-sim's differential drive. A twist (linear.x, angular.z) on the model's cmd_vel
// topic goes through Gazebo's speed limiter (velocity, acceleration, jerk; linear and angular)
// and becomes wheel speeds (v ∓ ω·separation/2) / radius, commanded to the left and right
// joints each step; odometry integrates the first left and right joints' positions
// (ignition::math::DiffDriveOdometry) and is published at odom_publish_frequency.
// Per step: PreUpdate commands the speeds computed in the previous step; Update (after
// Physics, where Gazebo's PostUpdate runs) reads new commands, limits them, computes the next
// speeds and updates the odometry.

#include "diff_drive/diff_drive.h"

#include <fmt/format.h>

#include <ignition/math/Angle.hh>
#include <ignition/math/DiffDriveOdometry.hh>
#include <ignition/math/Quaternion.hh>
#include <ignition/math/SpeedLimiter.hh>
#include <memory>
#include <vector>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

constexpr const char* kParams =
    "left_joint, right_joint, wheel_separation, wheel_radius, topic, odom_topic, tf_topic, "
    "frame_id, child_frame_id, odom_publish_frequency, {min,max}_{,linear_,angular_}"
    "{velocity,acceleration,jerk}";

class DiffDrive final : public System,
                        public ISystemConfigure,
                        public ISystemPreUpdate,
                        public ISystemUpdate,
                        public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "DiffDrive");
    left_ = wheel_joints(r, model_, config, "left_joint");
    right_ = wheel_joints(r, model_, config, "right_joint");
    separation_ = get_positive_or(config, "wheel_separation", 1.0);
    radius_ = get_positive_or(config, "wheel_radius", 0.2);
    // Gazebo's order: the generic limits first, the linear_/angular_ ones override them.
    read_speed_limits(config, "", limit_lin_);
    read_speed_limits(config, "", limit_ang_);
    read_speed_limits(config, "linear_", limit_lin_);
    read_speed_limits(config, "angular_", limit_ang_);
    schedule_.period = publish_period(config, "odom_publish_frequency", 50);

    cmd_ = add_twist_input(r, model_,
                           config.get_or<std::string>("topic", model_topic(r, model_, "cmd_vel")));
    enable_ = add_bool_input(r, model_, model_topic(r, model_, "enable"));
    odom_ = add_drive_odometry(r, model_, config);
    reject_unknown_parameters(config, "DiffDrive", kParams);
    reset_state();
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    for (ecs::Entity j : left_) command_joint_velocity(r, j, s_.left_speed);
    for (ecs::Entity j : right_) command_joint_velocity(r, j, s_.right_speed);
  }

  // Gazebo's PostUpdate: UpdateVelocity, then UpdateOdometry, at its simTime (the end of the
  // step: Kestrel's sim_time + dt).
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    const Duration now = info.sim_time + info.dt;
    read_commands(r);
    // UpdateVelocity
    double lin = s_.target_lin, ang = s_.target_ang;
    limit_twist(limit_lin_, limit_ang_, s_.history, lin, ang, info.dt);
    s_.right_speed = (lin + ang * separation_ / 2.0) / radius_;
    s_.left_speed = (lin - ang * separation_ / 2.0) / radius_;
    // UpdateOdometry
    update_drive_odometry(r, model_, odom_, *odometry_, joint_position(r, left_.front()),
                          joint_position(r, right_.front()), now, schedule_);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  // New messages since the last step: the enable topic first (false zeroes the target and
  // makes cmd_vel ignored until true), then cmd_vel (taken only while enabled).
  void read_commands(const ecs::Registry& r) {
    const auto& in = r.get<c::TopicInputs>(model_);
    if (const auto& e = in.boolean[enable_]; e.count != s_.enable_seen) {
      s_.enable_seen = e.count;
      s_.enabled = e.value;
      if (!s_.enabled) s_.target_lin = s_.target_ang = 0;
    }
    if (const auto& t = in.twist[cmd_]; t.count != s_.cmd_seen) {
      s_.cmd_seen = t.count;
      if (s_.enabled) {
        s_.target_lin = t.linear.X();
        s_.target_ang = t.angular.Z();
      }
    }
  }

  // The state right after configure (Gazebo keeps its state across a reset; Kestrel returns to
  // the start, as a fresh run).
  void reset_state() {
    s_ = State{};
    schedule_.last = Duration{0};
    odometry_ = std::make_unique<ignition::math::DiffDriveOdometry>();
    odometry_->SetWheelParams(separation_, radius_, radius_);
  }

  struct State {
    double left_speed = 0, right_speed = 0;  // [rad/s], commanded in the next PreUpdate
    double target_lin = 0, target_ang = 0;   // the last accepted twist [m/s, rad/s]
    TwistHistory history;                    // the limiters' last two commands
    bool enabled = true;
    std::uint64_t cmd_seen = 0, enable_seen = 0;
  };

  ecs::Entity model_ = ecs::kNullEntity;
  std::vector<ecs::Entity> left_, right_;
  double separation_ = 1.0, radius_ = 0.2;
  ignition::math::SpeedLimiter limit_lin_, limit_ang_;
  std::size_t cmd_ = 0, enable_ = 0, odom_ = 0;
  PublishSchedule schedule_;
  State s_;
  std::unique_ptr<ignition::math::DiffDriveOdometry> odometry_;
};

}  // namespace

std::unique_ptr<System> make_diff_drive() { return std::make_unique<DiffDrive>(); }

}  // namespace kestrel::systems
