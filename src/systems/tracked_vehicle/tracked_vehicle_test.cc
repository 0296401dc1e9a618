// TrackedVehicle: a twist becomes the tracks' speeds and centre of rotation as gz-sim computes
// them, and the vehicle drives straight at the commanded speed and turns rigidly about the
// centre of rotation; odometry as if the tracks were wheels; loud without TrackControllers.

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

std::string track_link(const std::string& name, double y) {
  return "<link name='" + name + "'><pose>0 " + std::to_string(y) +
         " 0 0 0 0</pose><inertial><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.06</iyy>"
         "<izz>0.06</izz></inertia></inertial><collision name='c'><geometry><box><size>0.6 0.1 "
         "0.1</size></box></geometry></collision></link><joint name='" +
         name + "_j' type='fixed'><parent>body</parent><child>" + name + "</child></joint>";
}

std::string controller(const std::string& link) {
  return "<plugin filename='gz-sim-track-controller-system' "
         "name='gz::sim::systems::TrackController'><link>" +
         link + "</link></plugin>";
}

// A 10 kg body on two 0.6 m tracks 0.5 m apart, on the ground; `extra` goes into the
// TrackedVehicle plugin, `controllers` is false to leave the TrackControllers out.
std::string crawler(const std::string& extra, bool controllers = true) {
  return R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.002</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry><plane>
    <normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>
  <model name="crawler"><pose>0 0 0.05 0 0 0</pose>
    <link name="body"><pose>0 0 0.1 0 0 0</pose><inertial><mass>10</mass><inertia><ixx>0.2</ixx><iyy>0.3</iyy><izz>0.4</izz></inertia></inertial>
      <collision name="c"><geometry><box><size>0.6 0.4 0.1</size></box></geometry></collision></link>
    )" + track_link("left", 0.25) +
         track_link("right", -0.25) +
         (controllers ? controller("left") + controller("right") : "") +
         R"(
    <plugin filename="gz-sim-tracked-vehicle-system" name="gz::sim::systems::TrackedVehicle">
      <left_track><link>left</link></left_track>
      <right_track><link>right</link></right_track>
      <tracks_separation>0.5</tracks_separation>)" +
         extra + R"(
    </plugin>
  </model>
</world></sdf>)";
}

void command(LoadedWorld& w, double lin, double ang) {
  auto& in = w.r().get<c::TopicInputs>(w.find("w::crawler")).twist;
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].topic, "/model/crawler/cmd_vel");
  in[0].linear.Set(lin, 0, 0);
  in[0].angular.Set(0, 0, ang);
  ++in[0].count;
}

const c::TrackSurface& track(LoadedWorld& w, const std::string& side) {
  return w.r().get<c::TrackSurface>(w.find("w::crawler::" + side));
}

// Straight: both tracks at the commanded speed (centre of rotation not finite), the body at it
// along its heading, odometry at v·t.
TEST(TrackedVehicle, DrivesStraightAtTheCommandedSpeed) {
  LoadedWorld w(crawler(""));
  w.step(250);
  const Vector3d start = w.r().get<c::Pose>(w.find("w::crawler")).value.Pos();
  command(w, 0.5, 0);
  w.step(1000);  // 2 s
  EXPECT_DOUBLE_EQ(track(w, "left").velocity, 0.5);
  EXPECT_DOUBLE_EQ(track(w, "right").velocity, 0.5);
  EXPECT_FALSE(track(w, "left").center_of_rotation.IsFinite());
  const Vector3d v = w.r().get<c::WorldLinearVelocity>(w.find("w::crawler::body")).value;
  EXPECT_NEAR(v.X(), 0.5, 0.005);
  EXPECT_NEAR(v.Y(), 0, 0.005);
  const Vector3d end = w.r().get<c::Pose>(w.find("w::crawler")).value.Pos();
  EXPECT_NEAR(end.X() - start.X(), 0.5 * 2, 0.05);  // the tracks reach the speed in a few ms
  const auto& odom = w.r().get<c::TopicOutputs>(w.find("w::crawler")).odometry.at(0);
  EXPECT_EQ(odom.topic, "/model/crawler/odometry");
  EXPECT_NEAR(odom.pose.Pos().X(), 0.5 * 2, 0.01);  // commanded track speeds, integrated
  EXPECT_NEAR(odom.linear.X(), 0.5, 1e-9);
  // In place (|lin| < 0.1): the centre of rotation is the body's origin, and the default
  // steering efficiency (0.5) doubles the speed difference: ±ang·separation.
  command(w, 0, 0.4);
  w.step(2);
  EXPECT_NEAR(track(w, "left").velocity, -0.4 * 0.5, 1e-12);
  EXPECT_NEAR(track(w, "right").velocity, 0.4 * 0.5, 1e-12);
  const Vector3d body = w.r().get<c::WorldPose>(w.find("w::crawler::body")).value.Pos();
  EXPECT_LT((track(w, "right").center_of_rotation - body).Length(), 0.01);
}

// Turning: speeds lin ∓ ang·separation / (2·steering_efficiency), the centre of rotation at
// lin / ang along the body's y axis. With steering_efficiency 1 the two tracks' speeds are a
// rigid rotation about that centre: the body keeps its distance to it (1 m) and turns at ang.
TEST(TrackedVehicle, TurnsAboutItsCentreOfRotation) {
  LoadedWorld w(crawler("<steering_efficiency>1</steering_efficiency>"));
  w.step(250);
  const auto body = w.find("w::crawler::body");
  const Vector3d p0 = w.r().get<c::WorldPose>(body).value.Pos();
  command(w, 0.5, 0.5);
  w.step(2);
  EXPECT_DOUBLE_EQ(track(w, "left").velocity, 0.5 - 0.5 * 0.5 / 2);
  EXPECT_DOUBLE_EQ(track(w, "right").velocity, 0.5 + 0.5 * 0.5 / 2);
  const Vector3d cor = track(w, "left").center_of_rotation;
  EXPECT_NEAR(cor.X(), p0.X(), 1e-3);
  EXPECT_NEAR(cor.Y(), p0.Y() + 1.0, 1e-3);
  const double yaw0 = w.r().get<c::WorldPose>(body).value.Rot().Yaw();
  w.step(1000);  // 2 s
  const auto X = w.r().get<c::WorldPose>(body).value;
  const Vector3d d = X.Pos() - cor;
  EXPECT_NEAR(std::hypot(d.X(), d.Y()), 1.0, 0.05);
  EXPECT_NEAR(X.Rot().Yaw() - yaw0, 0.5 * 2, 0.1);
}

// The steering efficiency from its topic scales the speed difference; a message the tracks
// cannot take (efficiency 0, a NaN twist) is refused and the last good command stands.
TEST(TrackedVehicle, SteeringEfficiencyFromItsTopicAndBadMessagesRefused) {
  LoadedWorld w(crawler(""));
  w.step(250);
  auto efficiency = [&](double value) {
    auto& in = w.r().get<c::TopicInputs>(w.find("w::crawler")).real;
    for (auto& e : in) {
      if (e.topic != "/model/crawler/steering_efficiency") continue;
      e.value = value;
      ++e.count;
      return;
    }
    ADD_FAILURE() << "no input on /model/crawler/steering_efficiency";
  };
  command(w, 0, 0.4);
  efficiency(1.0);
  w.step(2);
  EXPECT_NEAR(track(w, "left").velocity, -0.4 * 0.5 / 2, 1e-12);
  EXPECT_NEAR(track(w, "right").velocity, 0.4 * 0.5 / 2, 1e-12);
  efficiency(0.0);
  w.step(2);
  EXPECT_NEAR(track(w, "left").velocity, -0.4 * 0.5 / 2, 1e-12) << "efficiency 0 was taken";
  command(w, std::nan(""), 0.4);
  w.step(2);
  EXPECT_NEAR(track(w, "right").velocity, 0.4 * 0.5 / 2, 1e-12) << "a NaN twist was taken";
  command(w, 0, 0.8);
  w.step(2);
  EXPECT_NEAR(track(w, "right").velocity, 0.8 * 0.5 / 2, 1e-12) << "efficiency 1 still";
}

TEST(TrackedVehicle, TracksWithoutTrackControllersAreAnError) {
  LoadedWorld w(crawler("", /*controllers=*/false));
  try {
    w.step(1);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no TrackController of model 'w::crawler' listens on "
                                         "'/model/crawler/link/left/track_cmd_vel' and"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(testing::load_error(crawler("<left_track><lnk>x</lnk></left_track>")), "(no error)");
  // A parameter Gazebo's own test world gives and Gazebo never reads: a warning, not an error.
  EXPECT_EQ(testing::load_error(crawler("<tracks_height>0.18</tracks_height>")), "(no error)");
  EXPECT_NE(testing::load_error(crawler("<steering_efficiency>0</steering_efficiency>")),
            "(no error)");
}

}  // namespace
}  // namespace kestrel::systems
