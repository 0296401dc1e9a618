// OdometryPublisher against the ground truth (its pose is the model's true pose, its twist the
// true body-frame velocity) and gz-sim's odometry_publisher integration test ported on
// equivalent worlds (its test worlds are not in ../shared).

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"
#include "testing/vehicle_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Vector3d;
using testing::LoadedWorld;

std::string publisher(const std::string& params) {
  return R"(
      <plugin filename="gz-sim-odometry-publisher-system"
              name="gz::sim::systems::OdometryPublisher">)" +
         params + "</plugin>";
}

// gz-sim's odometry_publisher*.sdf and odometry_offset/noise.sdf: the diff-drive vehicle at
// `pose`, which its tests move with LinearVelocityCmd / AngularVelocityCmd. Gazebo's worlds
// leave the vehicle's wheels 0.325 m inside the ground plane, where Gazebo's physics holds it
// still; MuJoCo would push it out of the ground, so the equivalent world has no ground and no
// gravity: the vehicle stays exactly where it is until commanded, as in Gazebo.
std::string vehicle_world(const std::string& pose, const std::string& params) {
  testing::VehicleOptions o;
  o.pose = pose;
  o.plugins = publisher(params);
  return R"(<?xml version="1.0"?>
<sdf version="1.6">
  <world name="w">
    <physics name="1ms" type="ode"><max_step_size>0.001</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 0</gravity>)" +
         testing::vehicle_model(o) + R"(
  </world>
</sdf>)";
}

struct OdomRun {
  explicit OdomRun(const std::string& sdf, const std::string& model = "w::vehicle")
      : w(sdf), m(w.find(model)) {}
  const c::OdometryOutput& odometry() { return w.r().get<c::TopicOutputs>(m).odometry[0]; }
  void step(int n, const std::function<void()>& each = {}) {
    for (int i = 0; i < n; ++i) {
      if (each) each();
      w.step();
      poses.push_back(w.r().get<c::Pose>(m).value);
      if (odometry().sequence != seen) {
        seen = odometry().sequence;
        messages.push_back(odometry());
      }
    }
  }
  void command(const Vector3d& v, const Vector3d& omega) {
    w.r().set(m, c::LinearVelocityCmd{v});
    w.r().set(m, c::AngularVelocityCmd{omega});
  }
  LoadedWorld w;
  ecs::Entity m;
  std::vector<Pose3d> poses;
  std::vector<c::OdometryOutput> messages;
  std::uint64_t seen = 0;
};

// Ground truth: a vehicle driven at a known body-frame twist. The odometry's pose is the true
// pose (x, y, the whole orientation) and its twist, after the 10-sample means have filled, the
// true body-frame velocity and yaw rate.
TEST(OdometryPublisher, MatchesTheGroundTruth) {
  OdomRun run(vehicle_world("2 -1 0 0 0 0.7", ""));
  const Vector3d v(0.8, -0.3, 0), omega(0, 0, 0.4);
  run.step(2000, [&] { run.command(v, omega); });
  const auto& o = run.messages.back();
  const Pose3d truth = run.w.r().get<c::WorldPose>(run.m).value;
  EXPECT_EQ(o.stamp, from_seconds(2.0));
  EXPECT_NEAR(o.pose.Pos().X(), truth.Pos().X(), 1e-12);
  EXPECT_NEAR(o.pose.Pos().Y(), truth.Pos().Y(), 1e-12);
  EXPECT_EQ(o.pose.Pos().Z(), 0.0);  // 2D
  EXPECT_NEAR(o.pose.Rot().Yaw(), truth.Rot().Yaw(), 1e-12);
  // A finite difference over one step, rotated by the new heading: off by the ω·dt / 2 the
  // vehicle turned in the step (2e-4 rad here), and by Gazebo's float arithmetic.
  EXPECT_NEAR(o.linear.X(), v.X(), 1e-3);
  EXPECT_NEAR(o.linear.Y(), v.Y(), 1e-3);
  EXPECT_NEAR(o.angular.Z(), omega.Z(), 1e-5);
  EXPECT_EQ(o.frame_id, "vehicle/odom");
  EXPECT_EQ(o.child_frame_id, "vehicle/base_footprint");
}

// ---- gz-sim's odometry_publisher integration test ---------------------------------------------

// Movement (odometry_publisher.sdf) and MovementCustomTopic (odometry_publisher_custom.sdf):
// still for 1000 steps; then 3000 steps at (1, 0.5, 0) m/s and 0.2 rad/s: 150 messages at
// 50 Hz from 1.02 s, pose and twist as commanded (1 cm, 0.1).
void movement(const std::string& params, const std::string& topic) {
  OdomRun run(vehicle_world("0 0 0 0 0 0", params));
  EXPECT_EQ(run.odometry().topic, topic);
  run.step(1000);
  for (const auto& p : run.poses) EXPECT_EQ(run.poses[0], p);
  const std::size_t before = run.messages.size();
  const Vector3d v(1, 0.5, 0), omega(0, 0, 0.2);
  run.step(3000, [&] { run.command(v, omega); });
  ASSERT_EQ(run.messages.size() - before, 150u);
  double last = 1.0;
  for (std::size_t i = before; i < run.messages.size(); ++i) {
    EXPECT_DOUBLE_EQ(to_seconds(run.messages[i].stamp), last + 1.0 / 50.0);
    last = to_seconds(run.messages[i].stamp);
  }
  const c::OdometryOutput& first = run.messages[before];
  const c::OdometryOutput& last_msg = run.messages.back();
  for (const auto& [pose, odom] :
       {std::pair{run.poses[1020], first.pose}, std::pair{run.poses.back(), last_msg.pose}}) {
    EXPECT_NEAR(pose.Pos().X(), odom.Pos().X(), 1e-2);
    EXPECT_NEAR(pose.Pos().Y(), odom.Pos().Y(), 1e-2);
    EXPECT_NEAR(pose.Pos().Z(), odom.Pos().Z(), 1e-2);
    EXPECT_NEAR(pose.Rot().X(), odom.Rot().X(), 1e-2);
    EXPECT_NEAR(pose.Rot().Y(), odom.Rot().Y(), 1e-2);
    EXPECT_NEAR(pose.Rot().Z(), odom.Rot().Z(), 1e-2);
  }
  for (const c::OdometryOutput* o : {&std::as_const(run.messages[before + 5]), &last_msg}) {
    EXPECT_NEAR(o->linear.X(), v.X(), 1e-1);
    EXPECT_NEAR(o->linear.Y(), v.Y(), 1e-1);
    EXPECT_NEAR(o->linear.Z(), 0.0, 1e-1);
    EXPECT_NEAR(o->angular.X(), 0.0, 1e-1);
    EXPECT_NEAR(o->angular.Y(), 0.0, 1e-1);
    EXPECT_NEAR(o->angular.Z(), omega.Z(), 1e-1);
  }
}

TEST(GazeboOdometryPublisherTest, Movement) { movement("", "/model/vehicle/odometry"); }

constexpr const char* kCustom =
    "<odom_publish_frequency>50</odom_publish_frequency><odom_topic>/model/bar/odom</odom_topic>"
    "<odom_frame>odomCustom</odom_frame><robot_base_frame>baseCustom</robot_base_frame>";

TEST(GazeboOdometryPublisherTest, MovementCustomTopic) { movement(kCustom, "/model/bar/odom"); }

// OdomFrameId, OdomCustomFrameId: 100 steps give 5 messages with the frames.
TEST(GazeboOdometryPublisherTest, OdomFrameId) {
  for (const auto& [params, frame, child] :
       {std::tuple{"", "vehicle/odom", "vehicle/base_footprint"},
        std::tuple{kCustom, "odomCustom", "baseCustom"}}) {
    OdomRun run(vehicle_world("0 0 0 0 0 0", params));
    run.step(100);
    EXPECT_EQ(run.messages.size(), 5u);
    EXPECT_EQ(run.odometry().frame_id, frame);
    EXPECT_EQ(run.odometry().child_frame_id, child);
  }
}

// OffsetTagTest (odometry_offset.sdf): the vehicle at (10, -10, 0) with xyz_offset (1, -1, 0)
// and rpy_offset (1.5708, 0, 0): the odometry pose is (11, -11, 0), roll 1.57.
TEST(GazeboOdometryPublisherTest, OffsetTagTest) {
  OdomRun run(vehicle_world("10 -10 0 0 0 0",
                            "<xyz_offset>1 -1 0</xyz_offset><rpy_offset>1.5708 0 0</rpy_offset>"));
  run.step(3000);
  const auto& p = run.messages.back().pose;
  EXPECT_NEAR(p.Pos().X(), 11, 1e-2);
  EXPECT_NEAR(p.Pos().Y(), -11, 1e-2);
  EXPECT_NEAR(p.Pos().Z(), 0, 1e-2);
  EXPECT_NEAR(p.Rot().Roll(), 1.57, 1e-2);
  EXPECT_NEAR(p.Rot().Pitch(), 0, 1e-2);
  EXPECT_NEAR(p.Rot().Yaw(), 0, 1e-2);
  EXPECT_EQ(run.odometry().tf_topic, "/model/vehicle/pose");
}

// GaussianNoiseTest (odometry_noise.sdf, gaussian_noise 1): a still vehicle's twist has mean 0
// (±0.3) and variance 1 (±0.3) in all six components. Gazebo reads them from its
// OdometryWithCovariance (and checks its diagonal is 1), which ignition-msgs 8.2 does not have:
// Kestrel's Odometry carries the same twist.
TEST(GazeboOdometryPublisherTest, GaussianNoiseTest) {
  OdomRun run(vehicle_world("10 -10 0 0 0 0", "<gaussian_noise>1</gaussian_noise>"));
  run.step(3000);
  const auto n = static_cast<double>(run.messages.size());
  ASSERT_EQ(run.messages.size(), 150u);
  for (int k = 0; k < 6; ++k) {
    double sum = 0, sq = 0;
    for (const auto& m : run.messages) sum += k < 3 ? m.linear[k] : m.angular[k - 3];
    for (const auto& m : run.messages) {
      sq += std::pow((k < 3 ? m.linear[k] : m.angular[k - 3]) - sum / n, 2);
    }
    EXPECT_NEAR(sum / n, 0, 0.3) << k;
    EXPECT_NEAR(sq / n, 1, 0.3) << k;
  }
}

// Movement3d (odometry_publisher_3d.sdf: an X3 with MulticopterVelocityControl, dimensions
// 3): 3 s at (0.5, 0.3, 1.5) m/s and 0.2 rad/s: 150 messages; pose within 1 cm of the truth,
// twist within 0.1 of the command; frames X3/odom and X3/base_footprint on X3/pose.
TEST(GazeboOdometryPublisherTest, Movement3d) {
  testing::QuadOptions q;
  q.name = "X3";
  q.z = 0.053302;
  q.ground = true;
  q.velocity_control = true;
  q.model_extra = publisher("<dimensions>3</dimensions>");
  OdomRun run(testing::quad_world(q), "w::X3");
  run.step(1000);
  for (const auto& p : run.poses) EXPECT_LT((p.Pos() - run.poses[0].Pos()).Length(), 2e-3);
  const std::size_t before = run.messages.size();
  const Vector3d v(0.5, 0.3, 1.5), omega(0, 0, 0.2);
  run.step(3000, [&] { run.w.r().set(run.m, c::TwistCommand{v, omega, true}); });
  ASSERT_EQ(run.messages.size() - before, 150u);
  const c::OdometryOutput& final_msg = run.messages.back();
  EXPECT_EQ(final_msg.frame_id, "X3/odom");
  EXPECT_EQ(final_msg.child_frame_id, "X3/base_footprint");
  EXPECT_EQ(final_msg.tf_topic, "/model/X3/pose");
  const auto& pose = run.poses.back();
  EXPECT_NEAR(pose.Pos().X(), final_msg.pose.Pos().X(), 1e-2);
  EXPECT_NEAR(pose.Pos().Y(), final_msg.pose.Pos().Y(), 1e-2);
  EXPECT_NEAR(pose.Pos().Z(), final_msg.pose.Pos().Z(), 1e-2);
  EXPECT_NEAR(pose.Rot().X(), final_msg.pose.Rot().X(), 1e-2);
  EXPECT_NEAR(pose.Rot().Y(), final_msg.pose.Rot().Y(), 1e-2);
  EXPECT_NEAR(pose.Rot().Z(), final_msg.pose.Rot().Z(), 1e-2);
  EXPECT_NEAR(final_msg.linear.X(), v.X(), 1e-1);
  EXPECT_NEAR(final_msg.linear.Y(), v.Y(), 1e-1);
  EXPECT_NEAR(final_msg.linear.Z(), v.Z(), 1e-1);
  EXPECT_NEAR(final_msg.angular.X(), 0.0, 1e-1);
  EXPECT_NEAR(final_msg.angular.Y(), 0.0, 1e-1);
  EXPECT_NEAR(final_msg.angular.Z(), omega.Z(), 1e-1);
}

// Deliberate difference: Gazebo differences the first pose against the zero pose, so a model
// that does not start at the origin reports a velocity of (its distance / 1 ms) averaged over
// the first 10 samples; Kestrel starts from the model's first pose.
TEST(OdometryPublisher, NoVelocitySpikeAtStart) {
  OdomRun run(
      vehicle_world("10 -10 0 0 0 0", "<odom_publish_frequency>0</odom_publish_frequency>"));
  run.step(5);
  for (const auto& m : run.messages) {
    EXPECT_EQ(m.linear, Vector3d::Zero);
    EXPECT_EQ(m.angular, Vector3d::Zero);
  }
}

TEST(OdometryPublisher, ResetIsExactAndBadParametersAreErrors) {
  OdomRun run(vehicle_world("1 2 0 0 0 0", "<gaussian_noise>0.5</gaussian_noise>"));
  auto go = [&] {
    run.messages.clear();
    run.step(300, [&] { run.command(Vector3d(0.5, 0, 0), Vector3d(0, 0, 0.3)); });
    return run.messages;
  };
  const auto first = go();
  run.w.runner->reset_now();
  run.seen = 0;
  const auto second = go();
  ASSERT_EQ(first.size(), second.size());
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].pose, second[i].pose) << i;
    EXPECT_EQ(first[i].linear, second[i].linear) << i;
    EXPECT_EQ(first[i].angular, second[i].angular) << i;
  }
  EXPECT_NE(testing::load_error(vehicle_world("0 0 0 0 0 0", "<dimensions>4</dimensions>"))
                .find("<dimensions> must be 2 or 3, found 4"),
            std::string::npos);
  EXPECT_NE(testing::load_error(vehicle_world("0 0 0 0 0 0", "<odom_frame_id>x</odom_frame_id>"))
                .find("unknown parameter <odom_frame_id>"),
            std::string::npos);
}

}  // namespace
}  // namespace kestrel::systems
