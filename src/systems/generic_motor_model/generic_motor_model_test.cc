// GenericMotorModel (PX4's plugin): the bluerov2's thrusters (force_polynomial, duty cycle,
// bidirectional) push with the polynomial of the normalised duty cycle along the link's z and
// turn the joint at reference/slowdown; rpm control; velocity mode as MulticopterMotorModel
// (thrust k·ω² from the joint's speed, spin-up by the filter); refused parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

// PX4 uuv_bluerov2_heavy's thruster 0 polynomial.
const double kPoly[] = {
    0.0, 2.37936891e+00, 1.49248519e+02, -3.27398031e+02, 4.36609803e+02, -1.94364029e+02};

std::string rov_world(const std::string& motor) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="rov"><link name="base_link">
        <inertial><mass>13</mass><inertia><ixx>0.25</ixx><iyy>0.22</iyy><izz>0.36</izz></inertia></inertial>
      </link>
      <link name="thruster0"><pose>0.14 -0.10 0 0 1.5707963 0</pose>
        <inertial><mass>0.05</mass><inertia><ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz></inertia></inertial>
      </link>
      <joint name="thruster0_joint" type="revolute"><parent>base_link</parent><child>thruster0</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis></joint>
      <plugin filename="libGenericMotorModelPlugin.so" name="gz::sim::systems::GenericMotorModel">
        <jointName>thruster0_joint</jointName><linkName>thruster0</linkName>
        <actuator_number>0</actuator_number><turningDirection>ccw</turningDirection>)" +
         motor + "</plugin></model></world></sdf>";
}

const std::string kBlueRov = R"(<timeConstantUp>0.0125</timeConstantUp>
    <timeConstantDown>0.025</timeConstantDown><maxRotVelocity>1100.0</maxRotVelocity>
    <motorConstant>10</motorConstant><momentConstant>0.01</momentConstant>
    <commandSubTopic>command/motor_speed</commandSubTopic>
    <rotorDragCoefficient>0</rotorDragCoefficient><rollingMomentCoefficient>0</rollingMomentCoefficient>
    <rotorVelocitySlowdownSim>0.025</rotorVelocitySlowdownSim><motorType>force_polynomial</motorType>
    <controlMethod>duty_cycle</controlMethod><minCommand>0.00</minCommand>
    <minDutyCycle>1100</minDutyCycle><maxDutyCycle>1900</maxDutyCycle>
    <bidirectionalMotor>1</bidirectionalMotor>
    <positiveThrustPolynomial>[0.0, 2.37936891e+00, 1.49248519e+02, -3.27398031e+02, 4.36609803e+02, -1.94364029e+02]</positiveThrustPolynomial>)";

double poly(double x) {
  double y = 0;
  for (int i = 0; i < 6; ++i) y += kPoly[i] * std::pow(x, i);
  return y;
}

void command(LoadedWorld& w, double v) {
  w.r().get<c::ActuatorCommands>(w.find("w::rov")).velocity = {v};
}

TEST(GenericMotorModel, BlueRovThrusterPushesWithThePolynomialOfTheDutyCycle) {
  // Bidirectional: 1500 is zero, 1900 full forward (reference 1), 1100 full reverse (−1).
  for (double pwm : {1700.0, 1900.0, 1500.0, 1300.0}) {
    SCOPED_TRACE(pwm);
    testing::WrenchProbe p(rov_world(kBlueRov), "w::rov::thruster0");
    EXPECT_EQ(p.w.r().get<c::ActuatorCommandTopic>(p.w.find("w::rov")).topic,
              "/rov/command/motor_speed");
    ignition::math::Pose3d X;  // the link's pose the step's force was computed at
    const auto link = p.w.find("w::rov::thruster0");
    p.on_step = [&](ecs::Registry& r) { X = r.get<c::WorldPose>(link).value; };
    command(p.w, pwm);
    p.w.step(3);
    const double ref = (pwm - 1500) / 400;
    const double thrust = ref >= 0 ? poly(ref) : -poly(-ref);  // negative: the same polynomial
    // Along the thruster link's z.
    const Vector3d expected = X.Rot().RotateVector({0, 0, thrust});
    EXPECT_NEAR((p.wrench.force - expected).Length(), 0, 1e-9 + 1e-9 * std::abs(thrust));
    EXPECT_NEAR(p.w.r().get<c::JointVelocityCmd>(p.w.find("w::rov::thruster0_joint")).data.at(0),
                ref / 0.025, 1e-9);
  }
}

TEST(GenericMotorModel, DutyCycleBelowItsMinimumKeepsTheLastReference) {
  testing::WrenchProbe p(rov_world(kBlueRov), "w::rov::thruster0");
  command(p.w, 1700);
  p.w.step(1);
  command(p.w, 900);  // below minDutyCycle: PX4 keeps the reference
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.Length(), poly(0.5), 1e-9);
}

TEST(GenericMotorModel, VelocityModeThrustFromTheJointSpeedAfterTheFilter) {
  LoadedWorld w(rov_world(R"(<motorType>velocity</motorType><motorConstant>1e-5</motorConstant>
      <rotorVelocitySlowdownSim>10</rotorVelocitySlowdownSim><commandSubTopic>cmd</commandSubTopic>)"));
  command(w, 500);
  w.step(500);  // 40 time constants up: at the reference
  const double joint = w.r().get<c::JointVelocity>(w.find("w::rov::thruster0_joint")).data.at(0);
  EXPECT_NEAR(joint * 10, 500, 0.5);
}

TEST(GenericMotorModel, RefusedParameters) {
  using testing::load_error;
  EXPECT_THAT(load_error(rov_world("<motorType>force</motorType>")), ::testing::HasSubstr("force"));
  EXPECT_THAT(load_error(rov_world("<controlMethod>duty_cycle</controlMethod>")),
              ::testing::HasSubstr("minCommand"));
  EXPECT_THAT(load_error(rov_world("<motorType>force_polynomial</motorType>"
                                   "<positiveThrustPolynomial>[1, 2]</positiveThrustPolynomial>")),
              ::testing::HasSubstr("at least 4"));
  EXPECT_THAT(
      load_error(rov_world("<motorType>force_polynomial</motorType>"
                           "<positiveThrustPolynomial>[1, 2, x, 3]</positiveThrustPolynomial>")),
      ::testing::HasSubstr("'x'"));
}

}  // namespace
}  // namespace kestrel::systems
