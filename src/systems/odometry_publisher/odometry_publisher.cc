// OdometryPublisher: gz-sim's odometry from the model's true world pose. Each step (after
// Physics, where Gazebo's PostUpdate runs) the pose (times the configured offset) is
// differenced against the previous step's: velocities in the body frame, smoothed by rolling
// means over 10 steps, plus Gaussian noise; published at odom_publish_frequency as Odometry,
// OdometryWithCovariance and a one-pose Pose_V.

#include "odometry_publisher/odometry_publisher.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ignition/math/Helpers.hh>
#include <ignition/math/RollingMean.hh>
#include <memory>
#include <numbers>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/events.h"
#include "sensors/noise/noise.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;

constexpr const char* kParams =
    "odom_frame, robot_base_frame, dimensions, odom_publish_frequency, odom_topic, "
    "odom_covariance_topic, tf_topic, xyz_offset, rpy_offset, gaussian_noise";

// `current` moved by whole turns to within π of `last` (Gazebo's unwrapping).
double unwrap(double current, double last) {
  constexpr double pi = std::numbers::pi;
  while (current < last - pi) current += 2 * pi;
  while (current > last + pi) current -= 2 * pi;
  return current;
}

class OdometryPublisher final : public System,
                                public ISystemConfigure,
                                public ISystemUpdate,
                                public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    model_ = require_model(r, entity, config, "OdometryPublisher");
    const std::string name = r.get<c::Name>(model_).value;
    c::OdometryOutput out;
    out.frame_id = config.get_or<std::string>("odom_frame", name + "/odom");
    out.child_frame_id = config.get_or<std::string>("robot_base_frame", name + "/base_footprint");
    offset_.Pos() = config.get_or<Vector3d>("xyz_offset", Vector3d::Zero);
    offset_.Rot() =
        ignition::math::Quaterniond(config.get_or<Vector3d>("rpy_offset", Vector3d::Zero));
    sigma_ = get_positive_or(config, "gaussian_noise", 0.0, true);
    dimensions_ = config.get_or<int>("dimensions", 2);
    if (dimensions_ != 2 && dimensions_ != 3) {
      throw Error(
          config.child("dimensions")->where(),
          fmt::format("OdometryPublisher: <dimensions> must be 2 or 3, found {}", dimensions_));
    }
    schedule_.period = publish_period(config, "odom_publish_frequency", 50);
    out.topic = config.get_or<std::string>("odom_topic", model_topic(r, model_, "odometry"));
    // Gazebo also publishes an OdometryWithCovariance (diagonal gaussian_noise²) on
    // /model/<name>/odometry_with_covariance: ignition-msgs 8.2 (Debian 12) has no such message.
    if (const Element* e = config.child("odom_covariance_topic")) {
      spdlog::warn(
          "{}: OdometryPublisher: <odom_covariance_topic> '{}' is not published: "
          "ignition-msgs 8 has no OdometryWithCovariance message (the covariance is "
          "diagonal, gaussian_noise² = {})",
          e->where(), e->text(), sigma_ * sigma_);
    }
    out.tf_topic = config.get_or<std::string>("tf_topic", model_topic(r, model_, "pose"));
    odom_ = add_odometry_output(r, model_, std::move(out));
    reject_unknown_parameters(config, "OdometryPublisher", kParams);

    scoped_ = r.scoped_name(model_);
    ecs::Entity world = model_;
    while (r.parent(world) != ecs::kNullEntity) world = r.parent(world);
    const auto* seed = r.try_get<c::WorldSeed>(world);
    seed_ = seed ? seed->value : 0;
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this](const sim::WorldSeedChanged& e) { rng_ = stream(e.seed); });
    reset_state();
  }

  void update(const UpdateInfo& info, ecs::Registry& r) override {
    const Duration now = info.sim_time + info.dt;
    // The offset is a pose in the model frame (ignition-math: A * B is B expressed in A).
    const Pose3d pose = r.get<c::WorldPose>(model_).value * offset_;
    if (!s_.initialized) {
      s_.last_time = now;
      s_.last_pose = pose;  // Gazebo keeps the zero pose here (see README, Differences)
      s_.initialized = true;
      return;
    }
    const double dt = to_seconds(now - s_.last_time);
    if (ignition::math::equal(0.0, dt)) return;
    auto& o = r.get<c::TopicOutputs>(model_).odometry[odom_];
    o.pose = pose;
    if (dimensions_ == 2) o.pose.Pos().Z() = 0;
    const double dx = pose.Pos().X() - s_.last_pose.Pos().X();
    const double dy = pose.Pos().Y() - s_.last_pose.Pos().Y();
    const double yaw = unwrap(pose.Rot().Yaw(), s_.last_pose.Rot().Yaw());
    // Gazebo computes these in float (cosf, sinf, a float difference); so does Kestrel.
    const float yaw_diff = static_cast<float>(yaw - s_.last_pose.Rot().Yaw());
    if (dimensions_ == 2) {
      const float cy = std::cos(static_cast<float>(yaw)), sy = std::sin(static_cast<float>(yaw));
      s_.lin[0].Push((cy * dx + sy * dy) / dt);
      s_.lin[1].Push((cy * dy - sy * dx) / dt);
      o.linear.Set(s_.lin[0].Mean() + noise(), s_.lin[1].Mean() + noise(), noise());
      const double ax = noise(), ay = noise();
      o.angular.Set(ax, ay, 0);
    } else {
      const double roll = unwrap(pose.Rot().Roll(), s_.last_pose.Rot().Roll());
      const float roll_diff = static_cast<float>(roll - s_.last_pose.Rot().Roll());
      const double pitch = unwrap(pose.Rot().Pitch(), s_.last_pose.Rot().Pitch());
      const float pitch_diff = static_cast<float>(pitch - s_.last_pose.Rot().Pitch());
      const Vector3d v = pose.Rot().RotateVectorReverse(
                             Vector3d(dx, dy, pose.Pos().Z() - s_.last_pose.Pos().Z())) /
                         dt;
      for (int i = 0; i < 3; ++i) s_.lin[i].Push(v[i]);
      s_.ang[0].Push(roll_diff / dt);
      s_.ang[1].Push(pitch_diff / dt);
      const double lx = s_.lin[0].Mean() + noise(), ly = s_.lin[1].Mean() + noise();
      const double lz = s_.lin[2].Mean() + noise();
      const double ax = s_.ang[0].Mean() + noise(), ay = s_.ang[1].Mean() + noise();
      o.linear.Set(lx, ly, lz);
      o.angular.Set(ax, ay, 0);
    }
    s_.ang[2].Push(yaw_diff / dt);
    o.angular.Z(s_.ang[2].Mean() + noise());
    o.stamp = now;
    s_.last_pose = pose;
    s_.last_time = now;
    if (schedule_.due(now)) ++o.sequence;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { reset_state(); }

 private:
  sensors::Rng stream(std::uint64_t world_seed) const {
    return sensors::Rng(sensors::derive_seed(world_seed, scoped_, "odometry_publisher"));
  }
  double noise() { return sigma_ > 0 ? sigma_ * rng_.normal() : 0.0; }

  void reset_state() {
    s_.initialized = false;
    s_.last_time = Duration{0};
    s_.last_pose = Pose3d::Zero;
    for (auto& m : s_.lin) m.Clear();
    for (auto& m : s_.ang) m.Clear();
    schedule_.last = Duration{0};
    rng_ = stream(seed_);
  }

  struct State {
    bool initialized = false;
    Duration last_time{0};
    Pose3d last_pose;
    ignition::math::RollingMean lin[3], ang[3];  // windows of 10 (ignition-math's default)
  };

  ecs::Entity model_ = ecs::kNullEntity;
  Pose3d offset_;
  double sigma_ = 0;
  int dimensions_ = 2;
  std::size_t odom_ = 0;
  PublishSchedule schedule_;
  std::string scoped_;
  std::uint64_t seed_ = 0;
  sensors::Rng rng_{0};
  sim::EventBus::Subscription reseed_;
  State s_;
};

}  // namespace

std::unique_ptr<System> make_odometry_publisher() { return std::make_unique<OdometryPublisher>(); }

}  // namespace kestrel::systems
