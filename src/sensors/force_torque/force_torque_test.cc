#include <gtest/gtest.h>

#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::expect_near;
using testing::TestWorld;

// A 2 kg bob hanging 0.5 m below a revolute joint to the world, at rest.
std::string pendulum(const std::string& ft) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>
    <model name="p"><pose>0 0 2 0 0 0</pose><link name="bob">
      <inertial><pose>0 0 -0.5 0 0 0</pose><mass>2</mass>
        <inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial></link>
      <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child>
        <axis><xyz>1 0 0</xyz></axis>
        <sensor name="ft" type="force_torque"><update_rate>100</update_rate>)" +
         ft + R"(</sensor></joint></model></world></sdf>)";
}

c::ForceTorqueReading measure(const std::string& ft) {
  TestWorld w(pendulum(ft));
  w.add(make_force_torque_system());
  w.start();
  w.step(200);
  const ecs::Entity s = w.find("w::p::hinge::ft");
  EXPECT_EQ(w.r().get<c::SensorTopic>(s).topic,
            "/world/w/model/p/joint/hinge/sensor/ft/forcetorque");
  return w.r().get<c::ForceTorqueReading>(s);
}

TEST(ForceTorque, ChildToParentInTheChildFrameByDefault) {
  const auto r = measure("");
  EXPECT_EQ(r.sequence, 20u);
  // The bob pulls the world down with its weight; no torque about the hinge at rest.
  expect_near(r.force, {0, 0, -2 * 9.81}, 1e-3);
  expect_near(r.torque, {0, 0, 0}, 1e-3);
}

TEST(ForceTorque, ParentToChildInTheSensorFrame) {
  // Sensor rolled +90° about x: the joint's z axis is the sensor's y axis.
  const auto r = measure(R"(<pose>0 0 0 1.5707963267948966 0 0</pose><force_torque>
      <frame>sensor</frame><measure_direction>parent_to_child</measure_direction></force_torque>)");
  EXPECT_EQ(r.frame, c::WrenchFrame::kSensor);
  expect_near(r.force, {0, 2 * 9.81, 0}, 1e-3);
}

TEST(ForceTorque, TheTorqueIsAboutTheSensorOriginAsGazeboComputesIt) {
  // gz-sim's ForceTorque: τ_S = R_JSᵀτ_J − p_JS × F_S. The sensor 0.3 m along the joint's x: the
  // hinge's vertical force (2 kg · g, through the joint origin, no torque there) has the arm
  // −0.3 m x about the sensor: τ = (−0.3, 0, 0) × (0, 0, 19.62) = (0, 5.886, 0).
  const auto s = measure(R"(<pose>0.3 0 0 0 0 0</pose><force_torque><frame>sensor</frame>
      <measure_direction>parent_to_child</measure_direction></force_torque>)");
  expect_near(s.force, {0, 0, 2 * 9.81}, 1e-3);
  expect_near(s.torque, {0, 0.3 * 2 * 9.81, 0}, 1e-3);
  // The same in the child frame, child_to_parent (the default): both negated.
  const auto c = measure("<pose>0.3 0 0 0 0 0</pose>");
  expect_near(c.force, {0, 0, -2 * 9.81}, 1e-3);
  expect_near(c.torque, {0, -0.3 * 2 * 9.81, 0}, 1e-3);
  // Rotated and offset: Gazebo crosses the joint-frame offset with the sensor-frame force. Yawed
  // 90°: F_S = (0, 0, 19.62) still (z is kept), p_JS = (0.3, 0, 0) → τ_S = (0, 5.886, 0).
  const auto y = measure(R"(<pose>0.3 0 0 0 0 1.5707963267948966</pose><force_torque>
      <frame>sensor</frame><measure_direction>parent_to_child</measure_direction></force_torque>)");
  expect_near(y.torque, {0, 0.3 * 2 * 9.81, 0}, 1e-3);
}

TEST(ForceTorque, UnknownParameterIsAnError) {
  TestWorld w(pendulum("<force_torque><axes>child</axes></force_torque>"));
  w.add(make_force_torque_system());
  EXPECT_THROW(w.start(), Error);
}

}  // namespace
}  // namespace kestrel::sensors
