// MecanumDrive: the wheel speeds of the mecanum kinematics for each twist (gz-sim's formula),
// Gazebo's speed limits, reset, and the vehicle on Gazebo's rollers moving as the kinematics
// say.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"
#include "testing/vehicle_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using testing::LoadedWorld;

std::string world(const std::string& params, bool rollers = false) {
  testing::VehicleOptions o;
  o.skid = true;
  o.mecanum_rollers = rollers;
  o.plugins = R"(
      <plugin filename="gz-sim-mecanum-drive-system" name="gz::sim::systems::MecanumDrive">
        <front_left_joint>front_left_wheel_joint</front_left_joint>
        <front_right_joint>front_right_wheel_joint</front_right_joint>
        <back_left_joint>rear_left_wheel_joint</back_left_joint>
        <back_right_joint>rear_right_wheel_joint</back_right_joint>
        <wheel_separation>1.25</wheel_separation>
        <wheelbase>1.511</wheelbase>
        <wheel_radius>0.3</wheel_radius>)" +
              params + R"(
      </plugin>)";
  return testing::ground_world(testing::vehicle_model(o));
}

double cmd(LoadedWorld& w, const char* joint) {
  return w.r().get<c::JointVelocityCmd>(w.find(std::string("w::vehicle::") + joint)).data[0];
}

// l = (1.25 + 1.511) / 2; each wheel (v ∓ u ∓ ω l) / r with Gazebo's signs.
TEST(MecanumDrive, WheelSpeedsAreTheMecanumKinematics) {
  LoadedWorld w(world(""));
  const ecs::Entity m = w.find("w::vehicle");
  const double l = 0.5 * (1.25 + 1.511), r = 0.3;
  for (const auto& [v, u, omega] : {std::tuple{0.5, 0.0, 0.0}, std::tuple{0.0, 0.4, 0.0},
                                    std::tuple{0.0, 0.0, 0.3}, std::tuple{0.2, -0.3, 0.1}}) {
    auto& t = w.r().get<c::TopicInputs>(m).twist[0];
    t.linear.Set(v, u, 0);
    t.angular.Set(0, 0, omega);
    ++t.count;
    w.step(2);  // taken in this step's Update, commanded in the next step's PreUpdate
    EXPECT_NEAR(cmd(w, "front_left_wheel_joint"), (v - u - omega * l) / r, 1e-12);
    EXPECT_NEAR(cmd(w, "front_right_wheel_joint"), (v + u + omega * l) / r, 1e-12);
    EXPECT_NEAR(cmd(w, "rear_left_wheel_joint"), (v + u - omega * l) / r, 1e-12);
    EXPECT_NEAR(cmd(w, "rear_right_wheel_joint"), (v - u + omega * l) / r, 1e-12);
  }
}

// Gazebo's mecanum_drive.sdf limits (±5 m/s²): a 1 m/s sideways step ramps at 5 m/s².
TEST(MecanumDrive, AccelerationLimitsRampTheCommand) {
  LoadedWorld w(
      world("<min_acceleration>-5</min_acceleration><max_acceleration>5"
            "</max_acceleration>"));
  auto& t = w.r().get<c::TopicInputs>(w.find("w::vehicle")).twist[0];
  t.linear.Set(0, 1, 0);
  ++t.count;
  w.step(101);
  // 100 limited steps of 5 mm/s: u = 0.5 m/s; front left (−u) / r.
  EXPECT_NEAR(cmd(w, "front_left_wheel_joint"), -0.5 / 0.3, 1e-9);
  w.runner->reset_now();
  w.step(1);
  EXPECT_EQ(cmd(w, "front_left_wheel_joint"), 0.0);
}

// Gazebo's mecanum_drive.sdf rollers (μ 1 along fdir1 at ±45° in the chassis, none across):
// forward, sideways and turning commands move the vehicle as the mecanum kinematics say — v
// along x, u along y, ω about z — within 2 % over 2 s, after 1 s of settling. The kinematics
// are about the wheels' centre, 0.2014 m behind the model's frame.
TEST(MecanumDrive, RollersMoveTheVehicleAsTheKinematicsSay) {
  for (const auto& [v, u, omega] : {std::tuple{0.4, 0.0, 0.0}, std::tuple{0.0, 0.4, 0.0},
                                    std::tuple{0.0, 0.0, 0.3}, std::tuple{0.3, -0.2, 0.0}}) {
    SCOPED_TRACE(::testing::Message() << "v " << v << " u " << u << " omega " << omega);
    LoadedWorld w(world("", /*rollers=*/true));
    const ecs::Entity m = w.find("w::vehicle");
    auto& t = w.r().get<c::TopicInputs>(m).twist[0];
    t.linear.Set(v, u, 0);
    t.angular.Set(0, 0, omega);
    ++t.count;
    w.step(1000);
    const ignition::math::Vector3d centre(0.5 * (0.554283 - 0.957138), 0, 0);
    const auto X0 = w.r().get<c::Pose>(m).value;
    w.step(2000);
    const auto X1 = w.r().get<c::Pose>(m).value;
    // The centre's displacement in the start heading.
    const auto d = X0.Rot().RotateVectorReverse(X1.Pos() + X1.Rot().RotateVector(centre) -
                                                X0.Pos() - X0.Rot().RotateVector(centre));
    const double yaw = (X1.Rot() * X0.Rot().Inverse()).Euler().Z();
    const double tol = 0.02 * 2.0 * std::max({std::abs(v), std::abs(u), 0.1});
    if (omega == 0) {
      EXPECT_NEAR(d.X(), v * 2.0, tol);
      EXPECT_NEAR(d.Y(), u * 2.0, tol);
      EXPECT_NEAR(yaw, 0.0, 0.01);
    } else {
      EXPECT_NEAR(yaw, omega * 2.0, 0.02 * omega * 2.0);
      EXPECT_NEAR(d.Length(), 0.0, 0.02);
    }
  }
}

}  // namespace
}  // namespace kestrel::systems
