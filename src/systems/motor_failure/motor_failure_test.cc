// MotorFailureSystem (PX4's motor-failure plugin) on a hovering X3-class quadcopter: the motor
// number on its topic stops that motor's rotor (rotor_<n-1>_joint), 0 recovers it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ::testing::HasSubstr;
using testing::LoadedWorld;
using ::testing::Not;
using testing::QuadOptions;

std::string motor_failure(const std::string& body = "") {
  return R"(<plugin filename="MotorFailurePlugin" name="gz::sim::systems::MotorFailureSystem">)" +
         body + "</plugin>";
}

struct Hover {
  explicit Hover(const std::string& plugin) {
    QuadOptions o;
    o.z = 5;
    o.velocity_control = true;
    o.model_extra = plugin;
    w = std::make_unique<LoadedWorld>(testing::quad_world(o));
    model = w->find("w::quad");
    base = w->find("w::quad::base_link");
    hold();
  }
  void hold() { w->r().set(model, c::TwistCommand{{0, 0, 0}, {0, 0, 0}, true}); }  // vz = 0
  // As transport writes a received ignition.msgs.Int32 (components/messages.h).
  void send(int motor) {
    auto& in = w->r().get<c::TopicInputs>(model).int32.at(0);
    in.value = motor;
    ++in.count;
  }
  double z() { return w->r().get<c::WorldPose>(base).value.Pos().Z(); }
  double rotor_speed(int joint) {
    return w->r()
        .get<c::JointVelocity>(w->find("w::quad::rotor_" + std::to_string(joint) + "_joint"))
        .data.at(0);
  }
  std::unique_ptr<LoadedWorld> w;
  ecs::Entity model, base;
};

// The rotor joints turn at ω / rotorVelocitySlowdownSim (10): ~66 rad/s in hover.
constexpr double kSpinning = 30;

TEST(MotorFailureSystem, MotorTwoStopsItsRotorTheQuadFallsAndZeroRecovers) {
  Hover h(motor_failure());
  EXPECT_EQ(h.w->r().get<c::TopicInputs>(h.model).int32.at(0).topic,
            "/model/quad/motor_failure/motor_number");
  h.w->step(2000);
  const double z0 = h.z();
  EXPECT_GT(std::abs(h.rotor_speed(1)), kSpinning);
  h.send(2);  // motor 2 = rotor_1_joint (PX4 counts motors from 1)
  h.w->step(1);
  // Forced to 0 in the step after the motor model (MuJoCo's velocity servo: within 0.01 rad/s).
  EXPECT_NEAR(h.rotor_speed(1), 0.0, 0.01);
  EXPECT_GT(std::abs(h.rotor_speed(0)), kSpinning);
  h.w->step(300);
  EXPECT_NEAR(h.rotor_speed(1), 0.0, 0.01);
  EXPECT_LT(h.z(), z0 - 0.05);  // a quarter of the thrust gone: it sinks
  h.send(0);
  h.w->step(1);
  EXPECT_GT(std::abs(h.rotor_speed(1)), kSpinning);  // the motor model's command again
}

TEST(MotorFailureSystem, ANumberWithoutAMotorIsIgnoredAndResetRecovers) {
  Hover h(motor_failure("<MotorFailureTopic>/fail</MotorFailureTopic>"));
  EXPECT_EQ(h.w->r().get<c::TopicInputs>(h.model).int32.at(0).topic, "/fail");
  h.w->step(500);
  testing::CapturedLog log;
  h.send(9);
  h.w->step(200);
  EXPECT_THAT(log.text(), HasSubstr("motor 9 does not exist (motors 1..4)"));
  EXPECT_THAT(log.text(), Not(HasSubstr("motor 9 failed")));
  for (int j = 0; j < 4; ++j) EXPECT_GT(std::abs(h.rotor_speed(j)), kSpinning) << j;
  h.send(1);
  h.w->step(200);
  EXPECT_NEAR(h.rotor_speed(0), 0.0, 0.01);
  h.w->runner->request_reset();
  h.w->step(1);
  h.hold();
  h.w->step(500);  // the reset world's input is the initial one (0): every motor runs
  for (int j = 0; j < 4; ++j) EXPECT_GT(std::abs(h.rotor_speed(j)), kSpinning) << j;
}

TEST(MotorFailureSystem, BadConfigurationsAreErrors) {
  EXPECT_THAT(testing::load_error(testing::quad_world([] {
                QuadOptions o;
                o.model_extra = motor_failure("<MotorFailureTopc>/x</MotorFailureTopc>");
                return o;
              }())),
              HasSubstr("MotorFailureTopc"));
  // A model without rotor_<k>_joint joints: nothing it could fail.
  EXPECT_THAT(testing::load_error(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
      <model name="box"><link name="l"><inertial><mass>1</mass></inertial></link>)" +
                                  motor_failure() + "</model></world></sdf>"),
              HasSubstr("has no joint named rotor_<k>_joint"));
}

}  // namespace
}  // namespace kestrel::systems
