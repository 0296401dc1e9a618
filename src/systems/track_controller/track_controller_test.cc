// TrackController: a conveyor (a static track link) carries a box lying on it at the belt's
// speed, a one-link tracked body drives itself forward at it, the speed limits and the command
// age apply, and bad parameters are loud.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/track.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

// A 6 m conveyor belt (static, its top at z = 0.2) and a 0.3 m box lying on it; `plugin` is
// the belt's TrackController parameters.
std::string conveyor(const std::string& plugin, const std::string& yaw = "0") {
  return R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="belt"><static>true</static><pose>0 0 0.1 0 0 )" +
         yaw + R"(</pose>
    <link name="track"><collision name="c"><geometry><box><size>6 1 0.2</size></box></geometry>
      <surface><friction><ode><mu>1</mu><mu2>1</mu2></ode></friction></surface></collision></link>
    <plugin filename="gz-sim-track-controller-system" name="gz::sim::systems::TrackController">
      <link>track</link>)" +
         plugin + R"(
    </plugin>
  </model>
  <model name="box"><pose>0 0 0.35 0 0 0</pose>
    <link name="l"><inertial><mass>1</mass><inertia><ixx>0.015</ixx><iyy>0.015</iyy><izz>0.015</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.3 0.3 0.3</size></box></geometry>
      <surface><friction><ode><mu>1</mu><mu2>1</mu2></ode></friction></surface></collision></link>
  </model>
</world></sdf>)";
}

c::DoubleInput& velocity_input(LoadedWorld& w, const std::string& model) {
  auto& in = w.r().get<c::TopicInputs>(w.find("w::" + model)).real;
  EXPECT_EQ(in.size(), 1u);
  return in.at(0);
}

void send(LoadedWorld& w, const std::string& model, double v) {
  auto& in = velocity_input(w, model);
  in.value = v;
  ++in.count;
}

Vector3d velocity(LoadedWorld& w, const std::string& link) {
  return w.r().get<c::WorldLinearVelocity>(w.find(link)).value;
}

// A box on a conveyor moves with the belt's top surface: v along the track's +x, and along −x
// for a negative command; on a belt turned by 90° it moves along the world's +y.
TEST(TrackController, AConveyorCarriesABoxAtTheBeltSpeed) {
  for (const double v : {0.5, -0.3}) {
    LoadedWorld w(conveyor(""));
    EXPECT_EQ(velocity_input(w, "belt").topic, "/model/belt/link/track/track_cmd_vel");
    w.step(250);  // the box settles
    send(w, "belt", v);
    w.step(1000);  // 2 s
    const Vector3d u = velocity(w, "w::box::l");
    EXPECT_NEAR(u.X(), v, 0.01 * std::abs(v)) << v;
    EXPECT_NEAR(u.Y(), 0, 1e-4) << v;
    EXPECT_NEAR(u.Z(), 0, 1e-4) << v;
  }
  LoadedWorld turned(conveyor("", "1.5707963267948966"));
  turned.step(250);
  send(turned, "belt", 0.4);
  turned.step(1000);
  const Vector3d u = velocity(turned, "w::box::l");
  EXPECT_NEAR(u.X(), 0, 1e-3);
  EXPECT_NEAR(u.Y(), 0.4, 0.004);
}

// <max_velocity> limits the belt; <max_command_age> stops it once the last command is older.
TEST(TrackController, SpeedLimitsAndTheCommandAgeApply) {
  LoadedWorld w(conveyor("<max_velocity>0.2</max_velocity><max_command_age>1</max_command_age>"));
  w.step(250);
  send(w, "belt", 0.5);
  w.step(400);  // 0.8 s after the command
  EXPECT_NEAR(velocity(w, "w::box::l").X(), 0.2, 0.004);
  EXPECT_NEAR(w.r().get<c::TrackSurface>(w.find("w::belt::track")).velocity, 0.2, 1e-12);
  w.step(500);  // 1.8 s after it: the belt has stopped, the box too
  EXPECT_EQ(w.r().get<c::TrackSurface>(w.find("w::belt::track")).velocity, 0);
  EXPECT_NEAR(velocity(w, "w::box::l").X(), 0, 1e-3);
}

// A body whose only link is the track, lying on the ground, drives itself forward at the belt
// speed (its bottom surface moves backward under it), as gz-sim's tracked vehicle test expects
// of a positive command.
TEST(TrackController, ATrackDrivesItsBodyForward) {
  LoadedWorld w(R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry><plane>
    <normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>
  <model name="crawler"><pose>0 0 0.1 0 0 0.3</pose>
    <link name="track"><inertial><mass>10</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>1 0.3 0.2</size></box></geometry></collision></link>
    <plugin filename="gz-sim-track-controller-system" name="gz::sim::systems::TrackController">
      <link>track</link>
    </plugin>
  </model>
</world></sdf>)");
  w.step(250);
  send(w, "crawler", 0.6);
  w.step(1000);
  const Vector3d u = velocity(w, "w::crawler::track");
  EXPECT_NEAR(u.X(), 0.6 * std::cos(0.3), 0.006);
  EXPECT_NEAR(u.Y(), 0.6 * std::sin(0.3), 0.006);
  // Reset: the belt is still again.
  w.runner->reset_now();
  w.step(250);
  EXPECT_LT(velocity(w, "w::crawler::track").Length(), 1e-3);
}

TEST(TrackController, BadParametersAreLoud) {
  EXPECT_NE(
      testing::load_error(conveyor("").replace(conveyor("").find("<link>track</link>"), 18, "")),
      "(no error)");
  EXPECT_NE(testing::load_error(conveyor("<max_velocity>0.1</max_velocity><min_velocity>0.5"
                                         "</min_velocity>")),
            "(no error)");
  const std::string wrong = testing::load_error(conveyor("<velocity>1</velocity>"));
  EXPECT_NE(wrong.find("TrackController: unknown parameter <velocity>"), std::string::npos)
      << wrong;
}

}  // namespace
}  // namespace kestrel::systems
