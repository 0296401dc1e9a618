// TrajectoryFollower against Newton (gz-sim has no integration test of it): a free body in zero
// gravity pushed by `force` reaches a waypoint ahead at x = F t² / (2 m); one behind it is
// turned to by `torque` at α = τ / I_zz first; waypoints are taken in order, looped or held;
// the pause topic stops it; the circle and line forms give Gazebo's points.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

// A 2 kg box (I_zz = 0.5 kg·m²) floating at the origin, facing +x.
std::string world(const std::string& params, const std::string& pose = "0 0 0 0 0 0") {
  return R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="boat">
      <pose>)" +
         pose + R"(</pose>
      <link name="hull">
        <inertial><mass>2</mass><inertia><ixx>0.5</ixx><iyy>0.5</iyy><izz>0.5</izz></inertia>
        </inertial>
      </link>
      <plugin filename="gz-sim-trajectory-follower-system"
              name="gz::sim::systems::TrajectoryFollower">
        <link_name>hull</link_name>)" +
         params + R"(
      </plugin>
    </model>
  </world>
</sdf>)";
}

Vector3d position(LoadedWorld& w) {
  return w.r().get<c::WorldPose>(w.find("w::boat::hull")).value.Pos();
}

// A waypoint 3 m ahead: pushed by 60 N (a = 30 m/s²) from rest, the body is at F t² / (2 m)
// (semi-implicit Euler: a dt² n (n + 1) / 2 after n steps) until it is within range_tolerance
// (0.5 m) of it; then nothing is applied (the last waypoint is held).
TEST(TrajectoryFollower, PushesTowardsTheWaypointAsNewtonSays) {
  LoadedWorld w(world("<waypoints><waypoint>3 0</waypoint></waypoints>"));
  const double a = 60.0 / 2.0, dt = 0.001;
  int n = 0;
  while (position(w).X() < 3.0 - 0.5) {
    w.step();
    ++n;
    ASSERT_NEAR(position(w).X(), a * dt * dt * n * (n + 1) / 2, 1e-9) << n;
    ASSERT_LT(n, 10000);
  }
  // Within tolerance: no more force, it coasts at the speed it had.
  const double v = w.r().get<c::WorldLinearVelocity>(w.find("w::boat::hull")).value.X();
  EXPECT_NEAR(v, a * dt * n, 1e-9);
  w.step(100);
  EXPECT_NEAR(w.r().get<c::WorldLinearVelocity>(w.find("w::boat::hull")).value.X(), v, 1e-9);
  EXPECT_NEAR(std::abs(position(w).Y()), 0, 1e-12);
}

// A waypoint behind: the bearing (180°) is beyond bearing_tolerance, so the body is turned by
// +50 N·m (α = 100 rad/s²: the bearing's sign for exactly 180° is +) with no force, until the
// waypoint is within 2° of its heading.
TEST(TrajectoryFollower, TurnsTowardsAWaypointBehindAtTorqueOverInertia) {
  LoadedWorld w(world("<waypoints><waypoint>-3 0.001</waypoint></waypoints>"));
  const ecs::Entity hull = w.find("w::boat::hull");
  w.step(100);
  // 0.1 s of α = 100 rad/s²: ω = 10 rad/s (if not yet aligned: 180° takes √(2π/100) = 0.25 s).
  EXPECT_NEAR(w.r().get<c::WorldAngularVelocity>(hull).value.Z(), 10.0, 1e-9);
  EXPECT_NEAR(position(w).Length(), 0, 1e-12);
}

// Three waypoints in order, then held at the last; with <loop> the first comes back. The body
// moves as a boat in water (the test applies a drag of 20 N·s/m and 5 N·m·s/rad each step, the
// follower's wrench adds to it): without drag it would coast past every waypoint.
TEST(TrajectoryFollower, TakesWaypointsInOrderAndLoops) {
  for (const bool loop : {false, true}) {
    LoadedWorld w(world(std::string("<loop>") + (loop ? "true" : "false") +
                        "</loop><force>20</force><torque>5</torque>"
                        "<waypoints><waypoint>2 0</waypoint><waypoint>2 2</waypoint>"
                        "<waypoint>0 2</waypoint></waypoints>"));
    std::vector<int> reached;
    const Vector3d points[3] = {{2, 0, 0}, {2, 2, 0}, {0, 2, 0}};
    const ecs::Entity hull = w.find("w::boat::hull");
    for (int i = 0; i < 60000 && reached.size() < 4; ++i) {
      const Vector3d drag = -20.0 * w.r().get<c::WorldLinearVelocity>(hull).value;
      const Vector3d drag_torque = -5.0 * w.r().get<c::WorldAngularVelocity>(hull).value;
      w.r().set(hull, c::ExternalWorldWrenchCmd{drag, drag_torque});
      w.step();
      const Vector3d p = position(w);
      for (int k = 0; k < 3; ++k) {
        if ((p - points[k]).Length() < 0.5 && (reached.empty() || reached.back() != k)) {
          reached.push_back(k);
        }
      }
    }
    if (loop) {
      ASSERT_GE(reached.size(), 4u);
      EXPECT_EQ(reached, (std::vector<int>{0, 1, 2, 0}));
    } else {
      EXPECT_EQ(reached, (std::vector<int>{0, 1, 2}));
    }
  }
}

// The pause topic (/model/boat/trajectory_follower/pause): true stops every push.
TEST(TrajectoryFollower, PauseTopicStopsIt) {
  LoadedWorld w(world("<waypoints><waypoint>3 0</waypoint></waypoints>"));
  const ecs::Entity boat = w.find("w::boat");
  auto& pause = w.r().get<c::TopicInputs>(boat).boolean[0];
  EXPECT_EQ(pause.topic, "/model/boat/trajectory_follower/pause");
  pause.value = true;
  ++pause.count;
  w.step(200);
  EXPECT_EQ(position(w), Vector3d::Zero);
  auto& again = w.r().get<c::TopicInputs>(boat).boolean[0];
  again.value = false;
  ++again.count;
  w.step(10);
  EXPECT_GT(position(w).X(), 0);
}

// <circle>: Gazebo's 8 points of the circle around the start, the first at +x; <line>: the
// start and a point `length` away at `direction` in the link's frame. The body reaches the
// first point of each.
TEST(TrajectoryFollower, CircleAndLineForms) {
  {
    LoadedWorld w(world("<circle><radius>2</radius></circle>", "1 1 0 0 0 0"));
    bool reached = false;
    for (int i = 0; i < 5000 && !reached; ++i) {
      w.step();
      reached = (position(w) - Vector3d(3, 1, 0)).Length() < 0.5;
    }
    EXPECT_TRUE(reached);
  }
  {
    // Facing +y (yaw 90°), a line at direction 0 in the link frame goes along world +y.
    LoadedWorld w(world("<line><direction>0</direction><length>3</length></line>",
                        "0 0 0 0 0 1.5707963267948966"));
    bool reached = false;
    for (int i = 0; i < 5000 && !reached; ++i) {
      w.step();
      reached = (position(w) - Vector3d(0, 3, 0)).Length() < 0.5;
    }
    EXPECT_TRUE(reached);
  }
}

TEST(TrajectoryFollower, ResetIsExactAndBadParametersAreErrors) {
  LoadedWorld w(world("<waypoints><waypoint>2 1</waypoint><waypoint>0 3</waypoint></waypoints>"));
  w.step(1500);
  const Vector3d first = position(w);
  w.runner->reset_now();
  w.step(1500);
  EXPECT_EQ(position(w), first);
  EXPECT_NE(testing::load_error(world("")).find("give the trajectory as <waypoints>, <circle> or "
                                                "<line>"),
            std::string::npos);
  EXPECT_NE(testing::load_error(world("<waypoints><waypoint>1</waypoint></waypoints>"))
                .find("<waypoint> must be two numbers"),
            std::string::npos);
  EXPECT_NE(testing::load_error(world("<circle><radius>-1</radius></circle>")).find("radius"),
            std::string::npos);
}

}  // namespace
}  // namespace kestrel::systems
