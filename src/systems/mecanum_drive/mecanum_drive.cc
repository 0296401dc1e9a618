// MecanumDrive: gz-sim's (Fortress) mecanum drive. A twist (linear.x, linear.y, angular.z)
// goes through Gazebo's speed limiter (the linear limits for x and y, the angular ones for z)
// and becomes the four wheel speeds of the mecanum kinematics with l = (separation + base) / 2:
//   front left (v − u − ωl) / r, front right (v + u + ωl) / r,
//   back left  (v + u − ωl) / r, back right  (v − u + ωl) / r.
// The wheels' rollers are what the world's collisions say (Gazebo's mecanum world: spheres
// with friction only along <fdir1>, see src/physics/README.md).

#include "mecanum_drive/mecanum_drive.h"

#include <array>
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
    "front_left_joint, front_right_joint, back_left_joint, back_right_joint, wheel_separation, "
    "wheelbase, wheel_radius, topic, odom_topic, tf_topic, frame_id, child_frame_id, "
    "odom_publish_frequency, {min,max}_{velocity,acceleration,jerk}";

class MecanumDrive final : public System,
                           public ISystemConfigure,
                           public ISystemPreUpdate,
                           public ISystemUpdate,
                           public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "MecanumDrive");
    const char* names[4] = {"front_left_joint", "front_right_joint", "back_left_joint",
                            "back_right_joint"};
    for (int i = 0; i < 4; ++i) joints_[i] = wheel_joints(r, model_, config, names[i]);
    separation_ = get_positive_or(config, "wheel_separation", 1.0);
    wheelbase_ = get_positive_or(config, "wheelbase", 1.0);
    radius_ = get_positive_or(config, "wheel_radius", 0.2);
    read_speed_limits(config, "", limit_lin_);
    read_speed_limits(config, "", limit_ang_);
    cmd_ = add_twist_input(r, model_,
                           config.get_or<std::string>("topic", model_topic(r, model_, "cmd_vel")));
    // Gazebo Fortress reads these and advertises its odometry topics but never publishes on
    // them; Kestrel reads them (so worlds written for later Gazebo load) and says so.
    for (const char* p : {"odom_topic", "tf_topic", "frame_id", "child_frame_id"}) {
      (void)config.get_or<std::string>(p, "");
    }
    (void)publish_period(config, "odom_publish_frequency", 50);
    reject_unknown_parameters(config, "MecanumDrive", kParams);
    reset_state();
  }

  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    for (int i = 0; i < 4; ++i) {
      for (ecs::Entity j : joints_[i]) command_joint_velocity(r, j, s_.speed[i]);
    }
  }

  // Gazebo's PostUpdate (after Physics): UpdateVelocity.
  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (const auto& t = r.get<c::TopicInputs>(model_).twist[cmd_]; t.count != s_.cmd_seen) {
      s_.cmd_seen = t.count;
      s_.target = {t.linear.X(), t.linear.Y(), t.angular.Z()};
    }
    double lin = s_.target[0], lat = s_.target[1], ang = s_.target[2];
    const auto dt = std::chrono::duration_cast<std::chrono::steady_clock::duration>(info.dt);
    limit_lin_.Limit(lin, s_.last0[0], s_.last1[0], dt);
    limit_lin_.Limit(lat, s_.last0[1], s_.last1[1], dt);
    limit_ang_.Limit(ang, s_.last0[2], s_.last1[2], dt);
    s_.last1 = s_.last0;
    s_.last0 = {lin, lat, ang};
    const double l = 0.5 * (separation_ + wheelbase_);
    const double k = 1 / radius_;
    s_.speed[0] = (lin - lat - ang * l) * k;
    s_.speed[1] = (lin + lat + ang * l) * k;
    s_.speed[2] = (lin + lat - ang * l) * k;
    s_.speed[3] = (lin - lat + ang * l) * k;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  void reset_state() { s_ = State{}; }

  struct State {
    std::array<double, 4> speed{};  // front left, front right, back left, back right [rad/s]
    std::array<double, 3> target{}, last0{}, last1{};  // x, y, yaw rate
    std::uint64_t cmd_seen = 0;
  };

  ecs::Entity model_ = ecs::kNullEntity;
  std::vector<ecs::Entity> joints_[4];
  double separation_ = 1.0, wheelbase_ = 1.0, radius_ = 0.2;
  ignition::math::SpeedLimiter limit_lin_, limit_ang_;
  std::size_t cmd_ = 0;
  State s_;
};

}  // namespace

std::unique_ptr<System> make_mecanum_drive() { return std::make_unique<MecanumDrive>(); }

}  // namespace kestrel::systems
