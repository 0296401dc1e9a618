// The joint systems through transport with Gazebo's topics and ignition-msgs 8 types (what a
// ros_gz-style bridge sees): PX4's Actuators on /model/M/command/motor_speed drive a
// JointController (velocity[actuator_number]), JointStatePublisher's ignition.msgs.Model
// arrives on /world/W/model/M/joint_state, KineticEnergyMonitor's Double on
// /model/M/kinetic_energy (advertised at configure, so a one-off event reaches subscribers), and
// TouchPlugin's one-way /NS/enable service (Boolean request) makes it publish a Boolean on
// /NS/touched. Runs inside scripts/netns like the other transport tests (own IGN_PARTITION); waits
// poll with generous deadlines.
#include <ignition/msgs/actuators.pb.h>
#include <ignition/msgs/boolean.pb.h>
#include <ignition/msgs/double.pb.h>
#include <ignition/msgs/float.pb.h>
#include <ignition/msgs/joint_trajectory.pb.h>
#include <ignition/msgs/model.pb.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "transport/common_test.h"
#include "transport/entity_wrench.h"

namespace kestrel::transport {
namespace {

using namespace kestrel::transport::test_support;  // NOLINT: the fixture and its aliases

constexpr const char* kJointWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="jw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <model name="ground"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal></plane>
      </geometry></collision></link>
    </model>
    <model name="arm">
      <pose>0 0 2 0 0 0</pose>
      <link name="rotor">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
      <joint name="j" type="revolute"><parent>world</parent><child>rotor</child><axis><xyz>0 0 1</xyz></axis></joint>
      <plugin filename="gz-sim-joint-controller-system" name="gz::sim::systems::JointController">
        <joint_name>j</joint_name><sub_topic>command/motor_speed</sub_topic>
        <use_actuator_msg>true</use_actuator_msg><actuator_number>1</actuator_number>
      </plugin>
      <plugin filename="gz-sim-joint-state-publisher-system" name="gz::sim::systems::JointStatePublisher"/>
      <plugin filename="gz-sim-kinetic-energy-monitor-system" name="gz::sim::systems::KineticEnergyMonitor">
        <link_name>rotor</link_name><kinetic_energy_threshold>0.1</kinetic_energy_threshold>
      </plugin>
    </model>
    <model name="box">
      <pose>3 0 0.05 0 0 0</pose>
      <link name="link">
        <inertial><mass>1</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia></inertial>
        <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>
        <sensor name="touch" type="contact"><contact><collision>c</collision></contact></sensor>
      </link>
      <plugin filename="gz-sim-touchplugin-system" name="gz::sim::systems::TouchPlugin">
        <target>ground</target><namespace>box</namespace><time>0.01</time>
      </plugin>
    </model>
  </world>
</sdf>)";

class JointBridgeTest : public TransportTest {};

TEST_F(JointBridgeTest, JointSystemsThroughGazebosTopics) {
  world_text_ = kJointWorld;
  start(false);
  auto state = std::make_shared<Latest<msgs::Model>>();
  auto energy = std::make_shared<Latest<msgs::Double>>();
  auto touched = std::make_shared<Latest<msgs::Boolean>>();
  auto state_cb = state->callback();
  ASSERT_TRUE(node_->Subscribe("/world/jw/model/arm/joint_state", state_cb));
  auto energy_cb = energy->callback();
  ASSERT_TRUE(node_->Subscribe("/model/arm/kinetic_energy", energy_cb));
  auto touched_cb = touched->callback();
  ASSERT_TRUE(node_->Subscribe("/box/touched", touched_cb));
  Unsubscribe unsubscribe{
      node_.get(),
      {"/world/jw/model/arm/joint_state", "/model/arm/kinetic_energy", "/box/touched"}};

  // PX4's actuator message: velocity[1] = 2 rad/s is the joint's velocity command.
  auto cmd = node_->Advertise<msgs::Actuators>("/model/arm/command/motor_speed");
  msgs::Actuators a;
  a.add_velocity(7.0);
  a.add_velocity(2.0);
  const auto velocity = [&] {
    return *detail::on_step_thread<double>(
        *runner_,
        [](sim::Runner& r) {
          const auto* v =
              r.registry().try_get<c::JointVelocity>(r.registry().find_scoped("jw::arm::j"));
          return v && !v->data.empty() ? v->data[0] : 0.0;
        },
        std::chrono::seconds(5));
  };
  bool applied = false;
  for (int i = 0; i < 500 && !applied; ++i) {
    cmd.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    applied = std::abs(velocity() - 2.0) < 1e-9;
  }
  ASSERT_TRUE(applied);
  // The joint state: name, id, parent/child, axis1 with the commanded velocity.
  ASSERT_TRUE(wait_for([&](sim::Runner&) {
    const auto m = state->get().first;
    return m.joint_size() == 1 && std::abs(m.joint(0).axis1().velocity() - 2.0) < 1e-9;
  }));
  const auto m = state->get().first;
  EXPECT_EQ(m.name(), "arm");
  EXPECT_TRUE(m.has_header());
  EXPECT_EQ(m.joint(0).name(), "j");
  EXPECT_EQ(m.joint(0).child(), "rotor");
  EXPECT_EQ(m.joint(0).axis1().xyz().z(), 1.0);
  EXPECT_FALSE(m.joint(0).has_axis2());
  // Kinetic energy: stopping the rotor (½ I ω² = ½ · 0.1 · 2² = 0.2 J) in one step is a drop
  // above the 0.1 J threshold: one Double with the drop.
  EXPECT_EQ(energy->get().second, 0);
  a.set_velocity(1, 0.0);
  for (int i = 0; i < 500 && energy->get().second == 0; ++i) {
    cmd.Publish(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(energy->get().second, 1);
  EXPECT_NEAR(energy->get().first.data(), 0.2, 1e-9);

  // The touch plugin starts disabled: nothing; enabled through its service it reports once.
  EXPECT_EQ(touched->get().second, 0);
  msgs::Boolean on;
  on.set_data(true);
  ASSERT_TRUE(node_->Request("/box/enable", on));
  ASSERT_TRUE(wait_for([&](sim::Runner&) { return touched->get().second > 0; }));
  EXPECT_TRUE(touched->get().first.data());
}

constexpr const char* kWrenchWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="ww">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 0</gravity>
    <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench"/>
    <model name="body"><pose>0 0 1 0 0 0</pose>
      <link name="link">
        <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
    </model>
  </world>
</sdf>)";

// ApplyLinkWrench's ignition.msgs.EntityWrench (not in msgs 8.2: published raw with Gazebo's
// type name) on /world/W/wrench/persistent pushes the body at F / m until an
// ignition.msgs.Entity on /world/W/wrench/clear removes it.
TEST_F(JointBridgeTest, ApplyLinkWrenchThroughGazebosTopics) {
  world_text_ = kWrenchWorld;
  start(false);
  const auto accel_x = [&] {
    return *detail::on_step_thread<double>(
        *runner_,
        [](sim::Runner& r) {
          const auto* a = r.registry().try_get<c::WorldLinearAcceleration>(
              r.registry().find_scoped("ww::body::link"));
          return a ? a->value.X() : 0.0;
        },
        std::chrono::seconds(5));
  };
  detail::EntityWrenchMsg m;
  m.entity.emplace();
  m.entity->set_name("body");
  m.entity->set_type(msgs::Entity::MODEL);
  m.wrench.emplace();
  m.wrench->mutable_force()->set_x(4.0);
  auto pub = node_->Advertise("/world/ww/wrench/persistent", detail::kEntityWrenchType);
  const std::string bytes = detail::serialize_entity_wrench(m);
  // Each persistent message adds a wrench (as Gazebo): published once, when the world listens.
  for (int i = 0; i < 1000 && !pub.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(pub.HasConnections());
  pub.PublishRaw(bytes, detail::kEntityWrenchType);
  bool pushed = false;
  for (int i = 0; i < 500 && !pushed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pushed = std::abs(accel_x() - 2.0) < 1e-6;  // a = F / m = 4 / 2
  }
  ASSERT_TRUE(pushed);
  auto clear = node_->Advertise<msgs::Entity>("/world/ww/wrench/clear");
  bool cleared = false;
  for (int i = 0; i < 500 && !cleared; ++i) {
    clear.Publish(*m.entity);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cleared = std::abs(accel_x()) < 1e-9;
  }
  ASSERT_TRUE(cleared);
  // The bytes round-trip through protobuf with the fields set (and only those).
  const auto back = detail::parse_entity_wrench(bytes);
  ASSERT_TRUE(back && back->entity && back->wrench);
  EXPECT_EQ(back->entity->name(), "body");
  EXPECT_EQ(back->wrench->force().x(), 4.0);
  EXPECT_FALSE(back->wrench->has_force_offset());
  EXPECT_FALSE(detail::parse_entity_wrench(std::string("\x12\xff", 2)).has_value());
}

// JointTrajectoryController on a relative <topic> (taken from the root, as ign-transport
// does): an ignition.msgs.JointTrajectory of two points on /traj/arm moves the joint to the
// last point, and ignition.msgs.Float progress 0.5 then 1 arrives on /traj/arm_progress.
constexpr const char* kTrajectoryWorld = R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="tw">
    <physics type="ode"><max_step_size>0.001</max_step_size><real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 0</gravity>
    <model name="arm">
      <link name="rotor">
        <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
      <joint name="j" type="revolute"><parent>world</parent><child>rotor</child><axis><xyz>0 0 1</xyz></axis></joint>
      <plugin filename="ignition-gazebo-joint-trajectory-controller-system"
              name="ignition::gazebo::systems::JointTrajectoryController">
        <topic>traj/arm</topic><position_p_gain>10</position_p_gain><position_d_gain>1</position_d_gain>
      </plugin>
    </model>
  </world>
</sdf>)";

TEST_F(JointBridgeTest, JointTrajectoryAndItsProgress) {
  world_text_ = kTrajectoryWorld;
  start(false);
  auto progress = std::make_shared<Latest<msgs::Float>>();
  auto progress_cb = progress->callback();
  ASSERT_TRUE(node_->Subscribe("/traj/arm_progress", progress_cb));
  Unsubscribe unsubscribe{node_.get(), {"/traj/arm_progress"}};
  auto pub = node_->Advertise<msgs::JointTrajectory>("/traj/arm");
  for (int i = 0; i < 1000 && !pub.HasConnections(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(pub.HasConnections());
  // The progress channel is advertised at configure; wait until it sees this subscriber.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  msgs::JointTrajectory m;
  m.add_joint_names("j");
  for (const auto& [sec, nsec, q] : {std::tuple{0, 200'000'000, 0.4}, std::tuple{1, 0, 0.8}}) {
    auto* p = m.add_points();
    p->add_positions(q);
    p->mutable_time_from_start()->set_sec(sec);
    p->mutable_time_from_start()->set_nsec(nsec);
  }
  pub.Publish(m);
  ASSERT_TRUE(wait_for([&](sim::Runner& r) {
    const auto* q = r.registry().try_get<c::JointPosition>(r.registry().find_scoped("tw::arm::j"));
    return progress->get().second == 2 && q && std::abs(q->data.at(0) - 0.8) < 1e-3;
  }));
  EXPECT_FLOAT_EQ(progress->get().first.data(), 1.0f);
}

}  // namespace
}  // namespace kestrel::transport
