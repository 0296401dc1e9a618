// Thruster: the commanded thrust acts along the joint axis and the propeller turns at the speed
// Fossen's model gives it, T = ρ·KT·D⁴·ω|ω|; a free vehicle accelerates at T/m; the PID mode
// spins the propeller to that speed; limits, the thrust coefficient from α1, α2, topics, reset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

constexpr double kRho = 1000, kKt = 0.004, kD = 0.2;

// A 10 kg hull in zero gravity with a propeller (0.1 kg) on a joint about x behind it.
std::string thruster_world(const std::string& params) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="boat"><link name="hull">
        <inertial><mass>10</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      </link>
      <link name="propeller"><pose>-0.5 0 0 0 0 0</pose>
        <inertial><mass>0.1</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial>
      </link>
      <joint name="propeller_joint" type="revolute"><parent>hull</parent><child>propeller</child>
        <axis><xyz>1 0 0</xyz><limit><lower>-1e12</lower><upper>1e12</upper></limit></axis></joint>
      <plugin filename="gz-sim-thruster-system" name="gz::sim::systems::Thruster">
        <joint_name>propeller_joint</joint_name>)" +
         params + "</plugin></model></world></sdf>";
}

const std::string kFixed =
    "<thrust_coefficient>0.004</thrust_coefficient><fluid_density>1000</fluid_density>"
    "<propeller_diameter>0.2</propeller_diameter>";

c::DoubleInput& input(LoadedWorld& w, std::size_t i) {
  return w.r().get<c::TopicInputs>(w.find("w::boat")).real.at(i);
}
void command(LoadedWorld& w, double thrust, std::size_t i = 1) {
  input(w, i).value = thrust;
  ++input(w, i).count;
}
double joint_speed(LoadedWorld& w) {
  return w.r().get<c::JointVelocity>(w.find("w::boat::propeller_joint")).data.at(0);
}

TEST(Thruster, ThrustIsRhoKtD4OmegaAbsOmegaAlongTheAxis) {
  for (double T : {10.0, -4.0, 0.5}) {
    SCOPED_TRACE(T);
    testing::WrenchProbe p(thruster_world(kFixed + "<velocity_control>true</velocity_control>"),
                           "w::boat::propeller");
    command(p.w, T);
    p.w.step(3);
    const double n = joint_speed(p.w);
    EXPECT_NEAR(kRho * kKt * std::pow(kD, 4) * n * std::abs(n), T, 1e-6 * std::abs(T));
    EXPECT_NEAR(p.wrench.force.X(), T, 1e-9);
    EXPECT_NEAR(p.wrench.force.Y(), 0, 1e-9);
  }
}

// A propeller link turned so that its own z is the axis (as PX4's and the project's propeller
// links are): the thrust stays along the joint axis in the world while the link spins. The
// joint frame is the child link's (SDF's default), whatever the link's pose in the model.
TEST(Thruster, ThrustStaysAlongTheAxisOfATurnedSpinningPropeller) {
  std::string sdf = thruster_world(kFixed + "<velocity_control>true</velocity_control>");
  const std::string pose = "<pose>-0.5 0 0 0 0 0</pose>", axis = "<xyz>1 0 0</xyz>";
  sdf.replace(sdf.find(pose), pose.size(), "<pose>-0.5 0 0 0 1.5707963267948966 0</pose>");
  sdf.replace(sdf.find(axis), axis.size(), "<xyz>0 0 1</xyz>");
  testing::WrenchProbe p(sdf, "w::boat::propeller");
  command(p.w, 10);
  for (int k = 0; k < 4; ++k) {
    p.w.step(50);  // about 2 rad of propeller turn each time
    SCOPED_TRACE(k);
    EXPECT_NEAR(p.wrench.force.X(), 10, 1e-6);
    EXPECT_NEAR(p.wrench.force.Y(), 0, 1e-6);
    EXPECT_NEAR(p.wrench.force.Z(), 0, 1e-6);
  }
  EXPECT_GT(
      std::abs(p.w.r().get<c::JointPosition>(p.w.find("w::boat::propeller_joint")).data.at(0)),
      5.0);
}

TEST(Thruster, FreeVehicleAcceleratesAtThrustOverMass) {
  LoadedWorld w(thruster_world(kFixed + "<velocity_control>true</velocity_control>"));
  command(w, 5.05);
  w.step(1);
  const auto hull = w.find("w::boat::hull");
  const double v0 = w.r().get<c::WorldLinearVelocity>(hull).value.X();
  w.step(1000);
  const double v1 = w.r().get<c::WorldLinearVelocity>(hull).value.X();
  EXPECT_NEAR(v1 - v0, 5.05 / 10.1 * 1.0, 1e-3);
}

TEST(Thruster, PidSpinsThePropellerToTheSpeedOfTheThrust) {
  LoadedWorld w(thruster_world(kFixed + "<p_gain>0.01</p_gain>"));
  command(w, 2.0);
  w.step(3000);
  const double expected = std::sqrt(2.0 / (kRho * kKt * std::pow(kD, 4)));
  // Gazebo's PID acts only beyond a 0.1 rad/s error.
  EXPECT_NEAR(joint_speed(w), expected, 0.15);
}

TEST(Thruster, CommandsAreClampedTopicsAsGazebo) {
  testing::WrenchProbe p(thruster_world(kFixed + "<velocity_control>true</velocity_control>"
                                                 "<max_thrust_cmd>3</max_thrust_cmd>"
                                                 "<min_thrust_cmd>-1</min_thrust_cmd>"),
                         "w::boat::propeller");
  EXPECT_EQ(input(p.w, 0).topic, "/model/boat/joint/propeller_joint/cmd_pos");
  EXPECT_EQ(input(p.w, 1).topic, "/model/boat/joint/propeller_joint/cmd_thrust");
  command(p.w, 50);
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.X(), 3, 1e-12);
  command(p.w, -50, 0);  // the deprecated topic still commands
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.X(), -1, 1e-12);
  command(p.w, std::nan(""));
  p.w.step(1);
  EXPECT_EQ(p.wrench.force.X(), 0);

  LoadedWorld named(thruster_world(kFixed + "<namespace>sub</namespace><topic>thrust 1</topic>"));
  EXPECT_EQ(input(named, 1).topic, "sub/thrust_1");
}

TEST(Thruster, ThrustCoefficientFromAlphasFollowsTheAdvanceRatio) {
  // Without <thrust_coefficient>: KT = α1 + α2·(1 − w)·|v| / (ω·D), updated from the last step.
  LoadedWorld w(
      thruster_world("<alpha_1>0.01</alpha_1><alpha_2>-0.001</alpha_2>"
                     "<propeller_diameter>0.2</propeller_diameter>"
                     "<velocity_control>true</velocity_control>"));
  command(w, 4.0);
  w.step(2000);
  const double v = w.r().get<c::WorldLinearVelocity>(w.find("w::boat::propeller")).value.Length();
  const double n = joint_speed(w);
  const double kt = 0.01 - 0.001 * (0.8 * v) / (n * 0.2);
  EXPECT_NEAR(kRho * kt * std::pow(0.2, 4) * n * n, 4.0, 0.02);
  EXPECT_LT(kt, 0.01);
}

TEST(Thruster, RefusedParametersAndReset) {
  EXPECT_THAT(testing::load_error(thruster_world("<propeller_diameterr>1</propeller_diameterr>")),
              ::testing::HasSubstr("propeller_diameterr"));
  EXPECT_THAT(testing::load_error(thruster_world("<max_thrust_cmd>-5</max_thrust_cmd>"
                                                 "<min_thrust_cmd>0</min_thrust_cmd>")),
              ::testing::HasSubstr("min_thrust_cmd"));
  LoadedWorld w(thruster_world(kFixed + "<velocity_control>true</velocity_control>"));
  command(w, 3);
  w.step(200);
  const double first = joint_speed(w);
  w.runner->reset_now();
  command(w, 3);
  w.step(200);
  EXPECT_EQ(joint_speed(w), first);
}

}  // namespace
}  // namespace kestrel::systems
