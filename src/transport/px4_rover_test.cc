// PX4's rovers from ../shared (models/px4/models) drive when PX4's wheel command is published:
// the ignition.msgs.Actuators PX4 sends on /model/M/command/motor_speed, velocity[n] for the
// JointController of actuator n, all at one wheel speed, moves each rover straight ahead along
// its +X at about the wheels' rim speed. Runs inside scripts/netns like the other transport tests
// (own IGN_PARTITION); skips visibly without ../shared.
//
// Measured shares of the rim speed: rover_differential, rover_ackermann and rover_mecanum 0.99 or
// more; r1_rover 0.15 to 0.33, depending on when the command first arrives (its wheels slip on
// MuJoCo's soft contact made from their kp 1e6 / kd 100). PX4's lawnmower is not here: its wheels turn as commanded, but it stays on its
// frictionless casters (docs/compatibility.md, "PX4 rovers").
#include <ignition/msgs/actuators.pb.h>

#include <cmath>
#include <filesystem>
#include <iostream>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/time.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

struct Rover {
  const char* model;  // folder in ../shared/models/px4/models
  const char* name;   // the <model name> in its model.sdf
  int actuators;      // how many velocity entries its JointControllers read
  double radius;      // its driven wheels' radius [m]
  const char* joint;  // one of its driven wheel joints
  double share;       // the least share of the rim speed it must reach ahead
};

class Px4RoverTest : public TransportTest, public ::testing::WithParamInterface<Rover> {};

TEST_P(Px4RoverTest, DrivesStraightAheadOnItsMotorSpeedTopic) {
  const Rover& r = GetParam();
  const auto dir = std::filesystem::path(KESTREL_SHARED_DIR) / "models/px4/models" / r.model;
  if (!std::filesystem::exists(dir / "model.sdf")) {
    GTEST_SKIP() << "PX4's model zoo (" << dir << ") is absent";
  }
  world_text_ = std::string(R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="rw">
    <physics type="ode"><max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ground"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal></plane>
      </geometry></collision></link>
    </model>
    <include><uri>)") +
                dir.string() +
                R"(</uri><pose>0 0 0.3 0 0 0</pose></include>
  </world>
</sdf>)";
  start(false);
  const std::string base = std::string("rw::") + r.name + "::base_link";
  const auto state = [&] {
    return *detail::on_step_thread<std::pair<double, ignition::math::Pose3d>>(
        *runner_,
        [&](sim::Runner& run) {
          const auto* p = run.registry().try_get<c::WorldPose>(run.registry().find_scoped(base));
          return std::make_pair(to_seconds(run.info().sim_time),
                                p ? p->value : ignition::math::Pose3d::Zero);
        },
        std::chrono::seconds(5));
  };
  // Settle on the ground, command every actuator to 10 rad/s until the wheel turns at it (the
  // world runs faster than transport's discovery), then measure over 2 s of sim time.
  ASSERT_TRUE(wait_for([&](sim::Runner& run) { return to_seconds(run.info().sim_time) > 1.0; }));
  constexpr double kOmega = 10;  // rad/s
  msgs::Actuators a;
  for (int i = 0; i < r.actuators; ++i) a.add_velocity(kOmega);
  auto cmd =
      node_->Advertise<msgs::Actuators>("/model/" + std::string(r.name) + "/command/motor_speed");
  const std::string wheel = std::string("rw::") + r.name + "::" + r.joint;
  const auto wheel_speed = [&] {
    return *detail::on_step_thread<double>(
        *runner_,
        [&](sim::Runner& run) {
          const auto* v =
              run.registry().try_get<c::JointVelocity>(run.registry().find_scoped(wheel));
          return v && !v->data.empty() ? v->data[0] : 0.0;
        },
        std::chrono::seconds(5));
  };
  bool turning = false;
  for (int i = 0; i < 1000 && !turning; ++i) {
    cmd.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    turning =
        std::abs(wheel_speed() - kOmega) < 0.02 * kOmega;  // force-commanded wheels approach it
  }
  ASSERT_TRUE(turning) << wheel << " never turned at the commanded speed: " << wheel_speed();
  const auto [t0, p0] = state();
  double t = t0;
  ignition::math::Pose3d p = p0;
  for (int i = 0; i < 3000 && t < t0 + 2.0; ++i) {
    cmd.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::tie(t, p) = state();
  }
  ASSERT_GE(t, t0 + 2.0) << "the world did not run";
  // Along the rover's initial heading and across it, in the ground plane.
  const auto d = p.Pos() - p0.Pos();
  const double yaw = p0.Rot().Yaw();
  const double ahead = d.X() * std::cos(yaw) + d.Y() * std::sin(yaw);
  const double across = -d.X() * std::sin(yaw) + d.Y() * std::cos(yaw);
  const double rim = kOmega * r.radius * (t - t0);  // no slip, no spin-up
  std::cout << r.model << ": " << ahead << " m ahead in " << t - t0 << " s, " << ahead / rim
            << " of the wheels' rim speed\n";
  EXPECT_GT(ahead, r.share * rim) << r.model << " moved " << d << " in " << t - t0 << " s";
  EXPECT_LT(ahead, 1.05 * rim) << r.model;
  EXPECT_LT(std::abs(across), 0.1 * rim) << r.model;
  EXPECT_LT(std::abs(std::remainder(p.Rot().Yaw() - yaw, 2 * M_PI)), 0.1) << r.model;
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, Px4RoverTest,
    ::testing::Values(
        Rover{"rover_differential", "rover_differential", 2, 0.1, "wheel_rear_left_joint", 0.9},
        Rover{"rover_ackermann", "rover_ackermann", 1, 0.1, "wheel_rear_left_joint", 0.9},
        Rover{"rover_mecanum", "rover_mecanum", 4, 0.1, "wheel_rear_left_joint", 0.9},
        Rover{"r1_rover", "r1_rover", 2, 0.0686, "motor_0", 0.1}),
    [](const auto& info) { return std::string(info.param.model); });

}  // namespace
}  // namespace kestrel::transport
