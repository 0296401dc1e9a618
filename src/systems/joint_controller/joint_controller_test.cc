// JointController: gz-sim's joint_controller_system integration test on equivalent worlds
// (same numbers and tolerances), the velocity PID's steady state, reset, PX4's actuator topics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

std::string jc(const std::string& joint, const std::string& extra) {
  return R"(<plugin filename="gz-sim-joint-controller-system"
      name="gz::sim::systems::JointController"><joint_name>)" +
         joint + "</joint_name>" + extra + "</plugin>";
}

std::string world() {
  return gz_world(
      gz_rotor_model("joint_controller_test", "j1",
                     jc("j1", "<initial_velocity>5.0</initial_velocity>")) +
      gz_rotor_model("joint_controller_test_2", "j1",
                     jc("j1",
                        "<use_force_commands>true</use_force_commands><p_gain>0.2</p_gain>"
                        "<i_gain>0.01</i_gain>"),
                     3));
}

void command(LoadedWorld& w, const std::string& joint, double value) {
  testing::send_double(w, joint, value);
}

TEST(JointController, GazeboJointVelocityCommand) {
  LoadedWorld w(world());
  const auto rotor = w.find("w::joint_controller_test::rotor");
  EXPECT_EQ(testing::double_input(w, "w::joint_controller_test::j1").topic,
            "/model/joint_controller_test/joint/j1/cmd_vel");
  for (int i = 0; i < 1000; ++i) {
    w.step(1);
    const double speed = w.r().get<c::AngularVelocity>(rotor).value.Length();
    EXPECT_NEAR(i == 0 ? 0.0 : 5.0, speed, kTol) << "iteration " << i;
  }
  command(w, "w::joint_controller_test::j1", 10.0);
  for (int i = 0; i < 1000; ++i) {
    w.step(1);
    const auto v = w.r().get<c::AngularVelocity>(rotor).value;
    EXPECT_NEAR(0, v.X(), kTol);
    EXPECT_NEAR(0, v.Y(), kTol);
    EXPECT_NEAR(10.0, v.Z(), kTol);
  }
}

TEST(JointController, GazeboJointVelocityCommandWithForce) {
  LoadedWorld w(world());
  const auto rotor = w.find("w::joint_controller_test_2::rotor");
  w.step(10);
  EXPECT_NEAR(0, w.r().get<c::AngularVelocity>(rotor).value.Length(), kTol);
  command(w, "w::joint_controller_test_2::j1", 20.0);
  w.step(3000);
  const auto v = w.r().get<c::AngularVelocity>(rotor).value;
  EXPECT_NEAR(0, v.X(), 1e-2);
  EXPECT_NEAR(0, v.Y(), 1e-2);
  EXPECT_NEAR(20.0, v.Z(), 1e-2);
}

TEST(JointController, InexistentJointIsRefusedNotIgnored) {
  // Deliberate difference: Gazebo logs an error and runs without the controller.
  EXPECT_THAT(testing::load_error(gz_world(gz_rotor_model("m", "j1", jc("j0", "")))),
              ::testing::HasSubstr("'j0' is not a joint of model 'w::m'"));
}

TEST(JointController, ResetIsExact) {
  LoadedWorld w(world());
  const auto rotor = w.find("w::joint_controller_test_2::rotor");
  auto run = [&] {
    std::vector<double> out;
    w.step(2);
    command(w, "w::joint_controller_test_2::j1", 20.0);
    for (int k = 0; k < 200; ++k) {
      w.step(1);
      out.push_back(w.r().get<c::AngularVelocity>(rotor).value.Z());
    }
    return out;
  };
  const auto first = run();
  w.runner->reset_now();
  EXPECT_EQ(run(), first);
}

TEST(JointController, Px4RoverWheelsShareOneActuatorTopic) {
  // PX4's rover_differential: sub_topic + use_actuator_msg + actuator_number (gz-sim main), and
  // <control_type>, which Gazebo ignores (a warning here).
  testing::CapturedLog log;
  LoadedWorld w(gz_world(gz_rotor_model(
      "rover", "j1",
      jc("j1",
         "<sub_topic>command/motor_speed</sub_topic><control_type>velocity</control_type>"
         "<use_actuator_msg>true</use_actuator_msg><actuator_number>1</actuator_number>"))));
  auto& a = w.r().get<c::TopicInputs>(w.find("w::rover")).actuators.at(0);
  EXPECT_EQ(a.topic, "/model/rover/command/motor_speed");
  EXPECT_THAT(log.text(), ::testing::HasSubstr("<control_type> is not a parameter"));
  a.velocity = {7.0, 3.0};  // velocity[actuator_number]
  a.position = {5.0, 5.0};
  ++a.count;
  w.step(3);
  EXPECT_NEAR(w.r().get<c::JointVelocity>(w.find("w::rover::j1")).data[0], 3.0, 1e-9);
}

}  // namespace
}  // namespace kestrel::systems
