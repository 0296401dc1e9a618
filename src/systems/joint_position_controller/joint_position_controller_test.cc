// JointPositionController: gz-sim's joint_position_controller_system integration test on
// equivalent worlds (same numbers and tolerances), the PD response its gains imply, reset.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::gz_rotor_model;
using testing::gz_world;
using testing::LoadedWorld;

constexpr double kTol = 1e-4;  // gz-sim's TOL

std::string jpc(const std::string& joint, const std::string& extra) {
  return R"(<plugin filename="gz-sim-joint-position-controller-system"
      name="gz::sim::systems::JointPositionController"><joint_name>)" +
         joint + "</joint_name>" + extra + "</plugin>";
}

// A command as transport writes it at a step boundary (src/transport/bridges.cc).
void command(LoadedWorld& w, const std::string& joint, double value) {
  testing::send_double(w, joint, value);
}

double position(LoadedWorld& w, const std::string& joint) {
  return w.r().get<c::JointPosition>(w.find(joint)).data.at(0);
}

TEST(JointPositionController, GazeboJointPositionForceCommand) {
  LoadedWorld w(gz_world(gz_rotor_model(
      "joint_position_controller_test", "j1",
      jpc("j1",
          "<p_gain>1</p_gain><i_gain>0.1</i_gain><d_gain>0.01</d_gain><i_max>1</i_max>"
          "<i_min>-1</i_min><cmd_max>1000</cmd_max><cmd_min>-1000</cmd_min>"))));
  const std::string j = "w::joint_position_controller_test::j1";
  EXPECT_EQ(testing::double_input(w, j).topic,
            "/model/joint_position_controller_test/joint/j1/0/cmd_pos");
  w.step(10);
  EXPECT_NEAR(0, position(w, j), kTol);
  command(w, j, 2.0);
  w.step(1000);
  EXPECT_NEAR(2.0, position(w, j), kTol);
}

std::string velocity_world() {
  return gz_world(
      gz_rotor_model("joint_position_controller_test", "j1",
                     jpc("j1",
                         "<use_velocity_commands>true</use_velocity_commands>"
                         "<initial_position>-2.0</initial_position>")) +
      gz_rotor_model("joint_position_controller_test_with_max", "j2",
                     jpc("j2",
                         "<use_velocity_commands>true</use_velocity_commands>"
                         "<cmd_max>1000</cmd_max><initial_position>-2.0</initial_position>"),
                     100));
}

TEST(JointPositionController, GazeboJointPositionVelocityCommand) {
  LoadedWorld w(velocity_world());
  const std::string j = "w::joint_position_controller_test::j1";
  w.step(1);  // Gazebo's joint state is empty in the first step: no command yet
  EXPECT_NEAR(0, position(w, j), kTol);
  w.step(1);  // -error/dt: at initial_position in one step
  EXPECT_NEAR(-2.0, position(w, j), kTol);
  command(w, j, 2.0);
  w.step(1);
  EXPECT_NEAR(2.0, position(w, j), kTol);
}

TEST(JointPositionController, GazeboJointPositionVelocityCommandWithMax) {
  LoadedWorld w(velocity_world());
  const std::string j = "w::joint_position_controller_test_with_max::j2";
  w.step(1);
  EXPECT_NEAR(0, position(w, j), kTol);
  w.step(2);  // cmd_max 1000 rad/s moves at most 1 rad per 1 ms step
  EXPECT_NEAR(-2.0, position(w, j), kTol);
  command(w, j, 2.0);
  w.step(1);
  EXPECT_GT(std::abs(position(w, j) - 2.0), kTol);
  w.step(1000);
  EXPECT_NEAR(2.0, position(w, j), kTol);
}

// A rotor (izz 0.1 kg·m²) hinged to the world, PD gains p 10, d 0.6, no integral: I θ'' = -p e
// - d ė with e = θ - θt. The derivative of the error's step is an impulse d·θt (the PID
// differentiates the error), so θ(0) = 0, θ'(0+) = d·θt / I, then the damped oscillation
// ωn = √(p/I) = 10 rad/s, ζ = d / (2√(pI)) = 0.3.
TEST(JointPositionController, PdResponseIsTheOneItsGainsImply) {
  const double I = 0.1, p = 10, d = 0.6, target = 1.0;
  LoadedWorld w(testing::rotor_on_world(
      jpc("j", "<p_gain>10</p_gain><i_gain>0</i_gain><d_gain>0.6</d_gain>")));
  const std::string j = "w::arm::j";
  w.step(1);
  command(w, j, target);
  const double wn = std::sqrt(p / I), zeta = d / (2 * std::sqrt(p * I));
  const double wd = wn * std::sqrt(1 - zeta * zeta);
  const double x0 = -target, v0 = d * target / I;  // x = θ - θt
  double max_dev = 0, peak = 0;
  for (int k = 1; k <= 3000; ++k) {
    w.step(1);
    const double t = k * 1e-3;
    const double x = std::exp(-zeta * wn * t) *
                     (x0 * std::cos(wd * t) + (v0 + zeta * wn * x0) / wd * std::sin(wd * t));
    max_dev = std::max(max_dev, std::abs(position(w, j) - (target + x)));
    peak = std::max(peak, position(w, j));
  }
  // Semi-implicit Euler at ωn·dt = 0.01 follows the continuous solution within 1 % of the step.
  EXPECT_LT(max_dev, 0.01 * target);
  EXPECT_NEAR(position(w, j), target, 1e-4);  // holds the target
  EXPECT_GT(peak, target * 1.3);              // the overshoot of ζ 0.3 plus the kick
}

TEST(JointPositionController, ResetIsExact) {
  LoadedWorld w(gz_world(gz_rotor_model("m", "j1", jpc("j1", ""))));
  const std::string j = "w::m::j1";
  auto run = [&] {
    std::vector<double> out;
    w.step(3);
    command(w, j, 1.5);
    for (int k = 0; k < 300; ++k) {
      w.step(1);
      out.push_back(position(w, j));
    }
    return out;
  };
  const auto first = run();
  w.runner->reset_now();
  EXPECT_EQ(run(), first);  // bit for bit: the PID's integral and last error are reset too
}

TEST(JointPositionController, TopicsAndActuatorMessages) {
  LoadedWorld w(gz_world(
      gz_rotor_model("m", "j1",
                     jpc("j1", "<sub_topic>servo_0</sub_topic>") +
                         jpc("j1",
                             "<use_actuator_msg>true</use_actuator_msg>"
                             "<actuator_number>2</actuator_number>") +
                         jpc("j1", "<joint_index>0</joint_index><topic>/my cmd</topic>"))));
  const auto& in = w.r().get<c::TopicInputs>(w.find("w::m"));
  ASSERT_EQ(in.real.size(), 2u);
  EXPECT_EQ(in.real[0].topic, "/model/m/servo_0");
  EXPECT_EQ(in.real[1].topic, "/my_cmd");
  ASSERT_EQ(in.actuators.size(), 1u);
  EXPECT_EQ(in.actuators[0].topic, "/actuators");
}

TEST(JointPositionController, ActuatorMessagePositionIsTheTarget) {
  // use_velocity_commands: the joint is at its target one step after the command.
  LoadedWorld w(gz_world(gz_rotor_model(
      "m", "j1",
      jpc("j1",
          "<use_actuator_msg>true</use_actuator_msg><actuator_number>2</actuator_number>"
          "<use_velocity_commands>true</use_velocity_commands>"))));
  auto& a = w.r().get<c::TopicInputs>(w.find("w::m")).actuators.at(0);
  a.position = {0, 0, 0.5};
  a.velocity = {9, 9, 9};  // not read: position[actuator_number] is the target
  ++a.count;
  w.step(3);
  EXPECT_NEAR(position(w, "w::m::j1"), 0.5, kTol);
  testing::CapturedLog log;
  a.position = {1.0};  // too short for index 2: reported, the target is unchanged (Gazebo)
  ++a.count;
  w.step(3);
  EXPECT_NEAR(position(w, "w::m::j1"), 0.5, kTol);
  EXPECT_THAT(log.text(), ::testing::HasSubstr("actuator_number 2 is outside the position array"));
}

TEST(JointPositionController, BadParametersAreRefusedWithTheirLine) {
  using ::testing::HasSubstr;
  EXPECT_THAT(testing::load_error(gz_world(gz_rotor_model("m", "j1", jpc("nope", "")))),
              HasSubstr("'nope' is not a joint of model"));
  EXPECT_THAT(testing::load_error(
                  gz_world(gz_rotor_model("m", "j1", jpc("j1", "<joint_index>1</joint_index>")))),
              HasSubstr("<joint_index> 1 but joint 'j1' has 1 axis(es)"));
  EXPECT_THAT(
      testing::load_error(gz_world(gz_rotor_model("m", "j1", jpc("j1", "<p_gian>1</p_gian>")))),
      HasSubstr("unknown parameter <p_gian>"));
  EXPECT_THAT(testing::load_error(gz_world(gz_rotor_model(
                  "m", "j1", jpc("j1", "<use_actuator_msg>true</use_actuator_msg>")))),
              HasSubstr("needs <actuator_number>"));
}

}  // namespace
}  // namespace kestrel::systems

namespace kestrel::systems {
namespace {

// PX4's tiltrotor gives its tilt servos <err_max>, which Gazebo ignores: a warning, and the
// controller runs as without it.
TEST(JointPositionController, Px4ErrMaxIsWarnedAndIgnored) {
  testing::CapturedLog log;
  LoadedWorld w(gz_world(
      gz_rotor_model("tilt", "j1", jpc("j1", "<p_gain>1</p_gain><err_max>0.2</err_max>"))));
  EXPECT_THAT(log.text(), ::testing::HasSubstr("<err_max> is not a parameter"));
  command(w, "w::tilt::j1", 2.0);
  w.step(1000);
  EXPECT_NEAR(2.0, position(w, "w::tilt::j1"), 1e-3);
}

}  // namespace
}  // namespace kestrel::systems
