// The ground-vehicle systems through transport with Gazebo's topics and ignition-msgs 8 types
// (what a ros_gz-style bridge sees): a Twist on /model/M/cmd_vel drives a DiffDrive, a Boolean
// on /model/M/enable stops it, its odometry arrives as Odometry on /model/M/odometry and as a
// one-pose Pose_V on /model/M/tf with Gazebo's header (stamp, frame_id, child_frame_id), and a
// PosePublisher's link poses as Pose messages on /model/M/pose. Runs inside scripts/netns like
// the other transport tests (own IGN_PARTITION); waits poll with generous deadlines.
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/int32.pb.h>
#include <ignition/msgs/odometry.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/stringmsg.pb.h>
#include <ignition/msgs/twist.pb.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kestrel/components/messages.h"
#include "transport/common_test.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

constexpr const char* kVehicleWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ground"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal></plane>
      </geometry></collision></link>
    </model>
    <model name="rover">
      <pose>0 0 0.2 0 0 0</pose>
      <link name="body">
        <inertial><mass>2</mass><inertia><ixx>0.05</ixx><iyy>0.05</iyy><izz>0.05</izz></inertia></inertial>
        <collision name="c"><pose>-0.2 0 0 0 0 0</pose><geometry><sphere><radius>0.2</radius></sphere></geometry></collision>
      </link>
      <link name="left"><pose>0.2 0.3 0 -1.5708 0 0</pose>
        <inertial><mass>0.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>0.2</radius></sphere></geometry></collision>
      </link>
      <link name="right"><pose>0.2 -0.3 0 -1.5708 0 0</pose>
        <inertial><mass>0.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
        <collision name="c"><geometry><sphere><radius>0.2</radius></sphere></geometry></collision>
      </link>
      <joint name="lj" type="revolute"><parent>body</parent><child>left</child><axis><xyz>0 0 1</xyz></axis></joint>
      <joint name="rj" type="revolute"><parent>body</parent><child>right</child><axis><xyz>0 0 1</xyz></axis></joint>
      <plugin filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive">
        <left_joint>lj</left_joint><right_joint>rj</right_joint>
        <wheel_separation>0.6</wheel_separation><wheel_radius>0.2</wheel_radius>
      </plugin>
      <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
        <update_frequency>10</update_frequency>
      </plugin>
    </model>
  </world>
</sdf>)";

class VehicleBridgeTest : public TransportTest {
 protected:
  double rover_x() {
    return *detail::on_step_thread<double>(
        *runner_,
        [](sim::Runner& r) {
          const auto e = r.registry().find_scoped("tw::rover");
          return r.registry().get<c::Pose>(e).value.Pos().X();
        },
        std::chrono::seconds(5));
  }
  std::uint64_t twist_count() {
    return *detail::on_step_thread<std::uint64_t>(
        *runner_,
        [](sim::Runner& r) {
          const auto e = r.registry().find_scoped("tw::rover");
          return r.registry().get<c::TopicInputs>(e).twist[0].count;
        },
        std::chrono::seconds(5));
  }
};

TEST_F(VehicleBridgeTest, DiffDriveThroughGazebosTopics) {
  world_text_ = kVehicleWorld;
  start(false);
  auto odom = std::make_shared<Latest<msgs::Odometry>>();
  auto tf = std::make_shared<Latest<msgs::Pose_V>>();
  auto pose = std::make_shared<Latest<msgs::Pose>>();
  auto odom_cb = odom->callback();
  ASSERT_TRUE(node_->Subscribe("/model/rover/odometry", odom_cb));
  auto tf_cb = tf->callback();
  ASSERT_TRUE(node_->Subscribe("/model/rover/tf", tf_cb));
  auto pose_cb = pose->callback();
  ASSERT_TRUE(node_->Subscribe("/model/rover/pose", pose_cb));
  Unsubscribe unsubscribe{node_.get(),
                          {"/model/rover/odometry", "/model/rover/tf", "/model/rover/pose"}};

  // A Twist on /model/rover/cmd_vel, published until the world has applied one.
  auto cmd = node_->Advertise<msgs::Twist>("/model/rover/cmd_vel");
  msgs::Twist twist;
  twist.mutable_linear()->set_x(0.3);
  bool applied = false;
  for (int i = 0; i < 500 && !applied; ++i) {
    cmd.Publish(twist);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    applied = twist_count() > 0;
  }
  ASSERT_TRUE(applied);
  const double x0 = rover_x();
  ASSERT_TRUE(wait_for([&](sim::Runner& r) {
    const auto e = r.registry().find_scoped("tw::rover");
    return odom->get().second > 5 && r.registry().get<c::Pose>(e).value.Pos().X() > x0 + 0.1;
  }));

  const auto [o, n] = odom->get();
  ASSERT_TRUE(o.has_header());
  ASSERT_GE(o.header().data_size(), 2);
  EXPECT_EQ(o.header().data(0).key(), "frame_id");
  EXPECT_EQ(o.header().data(0).value(0), "rover/odom");
  EXPECT_EQ(o.header().data(1).key(), "child_frame_id");
  EXPECT_EQ(o.header().data(1).value(0), "rover/body");
  EXPECT_GT(o.pose().position().x(), 0.0);
  EXPECT_NEAR(o.twist().linear().x(), 0.3, 0.05);
  // The odometry's stamps are 20 ms of sim time apart (50 Hz).
  const Duration stamp = detail::from_msg(o.header().stamp());
  EXPECT_EQ(stamp.count() % 20'000'000, 0);
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return tf->get().second > 0; }));
  const auto t = tf->get().first;
  ASSERT_EQ(t.pose_size(), 1);
  EXPECT_EQ(t.pose(0).header().data(0).value(0), "rover/odom");
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return pose->get().second > 0; }));
  const auto p = pose->get().first;
  EXPECT_TRUE(p.name() == "rover::body" || p.name() == "rover::left" || p.name() == "rover::right")
      << p.name();
  EXPECT_EQ(p.header().data(0).value(0), "rover");
  EXPECT_EQ(p.header().data(1).value(0), p.name());

  // A Boolean false on /model/rover/enable: the target is zeroed, the rover stops.
  auto enable = node_->Advertise<msgs::Boolean>("/model/rover/enable");
  msgs::Boolean off;
  off.set_data(false);
  auto enable_count = [&] {
    return *detail::on_step_thread<std::uint64_t>(
        *runner_,
        [](sim::Runner& r) {
          const auto e = r.registry().find_scoped("tw::rover");
          return r.registry().get<c::TopicInputs>(e).boolean[0].count;
        },
        std::chrono::seconds(5));
  };
  bool disabled = false;
  for (int i = 0; i < 500 && !disabled; ++i) {
    enable.Publish(off);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    disabled = enable_count() > 0;
  }
  ASSERT_TRUE(disabled);
  ASSERT_TRUE(wait_for(
      [&](sim::Runner&) { return std::abs(odom->get().first.twist().linear().x()) < 1e-3; }));
}

// An Int32 input: PX4's motor-failure plugin (MotorFailureSystem) on a one-rotor model takes the
// failed motor's number from /model/M/motor_failure/motor_number and stops that rotor's joint.
TEST_F(VehicleBridgeTest, MotorFailureNumberThroughGazebosTopic) {
  world_text_ = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 0</gravity>
    <model name="m">
      <link name="base"><inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
      <link name="rotor"><inertial><mass>0.01</mass><inertia><ixx>1e-4</ixx><iyy>1e-4</iyy><izz>1e-4</izz></inertia></inertial></link>
      <joint name="rotor_0_joint" type="revolute"><parent>base</parent><child>rotor</child><axis><xyz>0 0 1</xyz></axis></joint>
      <plugin filename="MotorFailurePlugin" name="gz::sim::systems::MotorFailureSystem"/>
    </model>
  </world>
</sdf>)";
  start(false);
  auto pub = node_->Advertise<msgs::Int32>("/model/m/motor_failure/motor_number");
  msgs::Int32 one;
  one.set_data(1);
  auto input = [&] {
    return *detail::on_step_thread<std::pair<std::int32_t, std::uint64_t>>(
        *runner_,
        [](sim::Runner& r) {
          const auto& in = r.registry().get<c::TopicInputs>(r.registry().find_scoped("tw::m"));
          return std::pair{in.int32.at(0).value, in.int32.at(0).count};
        },
        std::chrono::seconds(5));
  };
  bool applied = false;
  for (int i = 0; i < 500 && !applied; ++i) {
    pub.Publish(one);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    applied = input().second > 0;
  }
  ASSERT_TRUE(applied);
  EXPECT_EQ(input().first, 1);
}

// The mission's progress on its state topic (MulticopterMission's <topic>, default
// /model/MODEL/mission/state): an ignition.msgs.StringMsg each time its phase, item or waypoint
// changes, ending "phase completed". The demo world runs as fast as it can, so the test resets it
// until the subscription is connected: a reset sends the mission back to "phase idle", and it
// publishes again when it takes off at its start_time (1 s of sim time). After each reset the
// test waits for 1.5 s of sim time, however slowly the world runs (under ASan 50 ms of wall time
// was less than that: the mission never left idle between resets and nothing was published).
TEST_F(VehicleBridgeTest, MissionStateOnItsTopic) {
  std::ifstream in(std::string(KESTREL_SOURCE_DIR) + "/worlds/x3_mission.sdf");
  std::stringstream text;
  text << in.rdbuf();
  world_text_ = text.str();
  const auto at = world_text_.find("<world name=\"x3_mission\">");
  ASSERT_NE(at, std::string::npos);
  world_text_.replace(at, 25, "<world name=\"tw\">");
  start(false);
  struct Seen {
    std::mutex m;
    std::vector<std::string> texts;
  };
  auto seen = std::make_shared<Seen>();
  std::function<void(const msgs::StringMsg&)> cb = [seen](const msgs::StringMsg& msg) {
    std::lock_guard lock(seen->m);
    seen->texts.push_back(msg.data());
  };
  ASSERT_TRUE(node_->Subscribe("/model/x3/mission/state", cb));
  Unsubscribe unsubscribe{node_.get(), {"/model/x3/mission/state"}};
  const auto texts = [&] {
    std::lock_guard lock(seen->m);
    return seen->texts;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (texts().empty() && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(control("reset { all: true }"));
    // (Before the reset is applied the old sim time passes at once: the loop resets again.)
    wait_for([](sim::Runner& r) { return r.info().sim_time > std::chrono::milliseconds(1500); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(texts().empty()) << "no mission state arrived";
  // The mission's 42 s of sim time can take longer than one wait_for (~5 s of wall time) under
  // ASan on a busy machine: waited for until the deadline.
  bool completed = false;
  while (!completed && std::chrono::steady_clock::now() < deadline) {
    completed = wait_for([&](sim::Runner&) {
      const auto t = texts();
      return !t.empty() && t.back().starts_with("phase completed");
    });
  }
  ASSERT_TRUE(completed) << "the mission did not complete within 60 s";
  const auto t = texts();
  for (const auto& s : t) {
    EXPECT_TRUE(s.starts_with("phase ") && s.find(", item ") != std::string::npos &&
                s.find(", waypoint ") != std::string::npos)
        << s;
  }
  for (std::size_t k = 1; k < t.size(); ++k) EXPECT_NE(t[k], t[k - 1]) << "sent without a change";
  EXPECT_NE(std::find_if(t.begin(), t.end(),
                         [](const std::string& s) { return s.starts_with("phase waypoint"); }),
            t.end());
}

}  // namespace
}  // namespace kestrel::transport
