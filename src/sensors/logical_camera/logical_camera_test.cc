// Logical camera: models whose origin is inside the frustum, with their pose in the sensor
// frame; the frustum's height is its width over the aspect ratio.

#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/camera.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::TestWorld;

std::string marker(const std::string& name, const std::string& pose) {
  return "<model name='" + name + "'><static>true</static><pose>" + pose +
         "</pose><link name='l'/></model>";
}

TEST(LogicalCamera, SeesTheModelsInItsFrustum) {
  TestWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.01</max_step_size></physics>)" +
              marker("ahead", "2 0.5 0.2 0 0 1") + marker("behind", "-2 0 0 0 0 0") +
              marker("too_far", "3 0 0 0 0 0") + marker("too_high", "2 0 0.9 0 0 0") +
              marker("wide", "2 1.1 0 0 0 0") +
              R"(<model name='cam'><static>true</static><pose>0 0 0 0 0 0</pose>
      <link name='l'><sensor name='s' type='logical_camera'><update_rate>10</update_rate>
        <logical_camera><near>0.55</near><far>2.5</far><horizontal_fov>1.05</horizontal_fov>
        <aspect_ratio>1.8</aspect_ratio></logical_camera></sensor></link></model>
    </world></sdf>)");
  w.add(make_logical_camera_system(), "LogicalCamera");
  w.start(false);
  w.step(10);
  const auto& x = w.r().get<c::LogicalCameraReading>(w.find("w::cam::l::s"));
  ASSERT_EQ(x.sequence, 1u);
  // tan(0.525)·2 = 1.16 m half-width at 2 m (wide at 1.1 is in), half-height 1.16/1.8 = 0.64
  // (too_high at 0.9 is out).
  std::vector<std::string> names;
  for (const auto& m : x.models) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ahead", "wide"}));
  EXPECT_NEAR(x.models[0].pose.Pos().Y(), 0.5, 1e-12);
  EXPECT_NEAR(x.models[0].pose.Rot().Yaw(), 1, 1e-12);
  EXPECT_EQ(w.r().get<c::SensorTopic>(w.find("w::cam::l::s")).topic,
            "/world/w/model/cam/link/l/sensor/s/logical_camera");
}
// The deliberate difference from Gazebo (README): a nested model is found at its world pose and
// named by its scoped name; Gazebo would test its pose in its parent (0.2 m ahead of the camera:
// inside the near plane, unseen) as if it were a world pose.
TEST(LogicalCamera, SeesANestedModelAtItsWorldPose) {
  TestWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.01</max_step_size></physics>
    <model name='vehicle'><static>true</static><pose>1.8 0 0 0 0 0</pose><link name='body'/>
      <model name='payload'><pose>0.2 0 0 0 0 0</pose><link name='l'/></model></model>
    <model name='cam'><static>true</static>
      <link name='l'><sensor name='s' type='logical_camera'><update_rate>10</update_rate>
        <logical_camera><near>0.55</near><far>2.5</far><horizontal_fov>1.05</horizontal_fov>
        <aspect_ratio>1.8</aspect_ratio></logical_camera></sensor></link></model>
    </world></sdf>)");
  w.add(make_logical_camera_system(), "LogicalCamera");
  w.start(false);
  w.step(10);
  const auto& x = w.r().get<c::LogicalCameraReading>(w.find("w::cam::l::s"));
  ASSERT_EQ(x.models.size(), 2u);
  EXPECT_EQ(x.models[0].name, "vehicle");
  EXPECT_EQ(x.models[1].name, "vehicle::payload");
  EXPECT_NEAR(x.models[1].pose.Pos().X(), 2.0, 1e-12);  // 1.8 + 0.2, not 0.2
}

}  // namespace
}  // namespace kestrel::sensors
