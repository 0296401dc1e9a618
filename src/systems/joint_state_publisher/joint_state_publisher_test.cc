// JointStatePublisher: which joints, topic and period (gz-sim's rules) and the state it
// publishes (transport sends it as ignition.msgs.Model: src/transport/vehicle_bridge_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

std::string arm(const std::string& plugin) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="arm"><link name="l0"/>
      <link name="l1"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
      <link name="l2"><inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>
      <joint name="base" type="fixed"><parent>world</parent><child>l0</child></joint>
      <joint name="shoulder" type="revolute"><parent>l0</parent><child>l1</child><axis><xyz>0 1 0</xyz></axis></joint>
      <joint name="elbow" type="prismatic"><parent>l1</parent><child>l2</child><axis><xyz>1 0 0</xyz></axis></joint>
      <model name="inner"><link name="x"/></model>)" +
         plugin + "</model></world></sdf>";
}

constexpr const char* kOpen = R"(<plugin filename="gz-sim-joint-state-publisher-system"
    name="gz::sim::systems::JointStatePublisher">)";

const c::JointStateOutput& state(LoadedWorld& w) {
  return w.r().get<c::TopicOutputs>(w.find("w::arm")).joint_state.at(0);
}

std::vector<std::string> names(const c::JointStateOutput& o) {
  std::vector<std::string> out;
  for (const auto& j : o.joints) out.push_back(j.name);
  return out;
}

TEST(JointStatePublisher, AllJointsOfTheModelOnTheScopedTopic) {
  LoadedWorld w(arm(std::string(kOpen) + "</plugin>"));
  EXPECT_EQ(state(w).topic, "/world/w/model/arm/joint_state");
  EXPECT_EQ(state(w).sequence, 0u);
  w.step(1);
  EXPECT_EQ(state(w).sequence, 1u);  // every step (no update_rate)
  w.step(1);
  EXPECT_EQ(state(w).sequence, 2u);
  EXPECT_EQ(names(state(w)), (std::vector<std::string>{"base", "shoulder", "elbow"}));
  EXPECT_EQ(state(w).name, "arm");
  EXPECT_EQ(state(w).id, w.find("w::arm"));
  EXPECT_EQ(state(w).stamp, std::chrono::milliseconds(2));
}

// Gravity −9.8 on the shoulder's 1 kg link whose centre is 0.5 m out along x, about y: the
// state published after each step is the joint's own position/velocity, axis and limits.
TEST(JointStatePublisher, PublishesTheJointsStateAfterTheStep) {
  LoadedWorld w(arm(std::string(kOpen) + "<joint_name>shoulder</joint_name></plugin>"));
  w.step(100);
  const auto& o = state(w);
  ASSERT_EQ(o.joints.size(), 1u);
  const auto& j = o.joints[0];
  const ecs::Entity sh = w.find("w::arm::shoulder");
  EXPECT_EQ(j.id, sh);
  EXPECT_EQ(j.parent, "l0");
  EXPECT_EQ(j.child, "l1");
  EXPECT_TRUE(j.has_axis1 && j.has_axis1_info);
  EXPECT_FALSE(j.has_axis2);
  EXPECT_EQ(j.xyz, ignition::math::Vector3d(0, 1, 0));
  EXPECT_EQ(j.axis1.position, w.r().get<c::JointPosition>(sh).data.at(0));
  EXPECT_EQ(j.axis1.velocity, w.r().get<c::JointVelocity>(sh).data.at(0));
  EXPECT_EQ(o.stamp, std::chrono::milliseconds(100));
}

TEST(JointStatePublisher, UpdateRateAndReset) {
  LoadedWorld w(arm(std::string(kOpen) + "<update_rate>40</update_rate></plugin>"));
  // Gazebo's schedule: the first step (since last = 0 is not > 0 ... 1 ms < 25 ms: skipped)...
  std::vector<std::uint64_t> seq;
  for (int k = 0; k < 60; ++k) {
    w.step(1);
    seq.push_back(state(w).sequence);
  }
  // ... published at 25 ms and 50 ms of sim time.
  EXPECT_EQ(seq[23], 0u);
  EXPECT_EQ(seq[24], 1u);
  EXPECT_EQ(seq[48], 1u);
  EXPECT_EQ(seq[49], 2u);
  w.runner->reset_now();
  std::vector<std::uint64_t> again;
  for (int k = 0; k < 60; ++k) {
    w.step(1);
    again.push_back(state(w).sequence);
  }
  EXPECT_EQ(again, seq);
}

TEST(JointStatePublisher, NamedJointsTopicAndRate) {
  LoadedWorld w(arm(std::string(kOpen) +
                    "<joint_name>elbow</joint_name><joint_name>shoulder</joint_name>"
                    "<joint_name>elbow</joint_name><topic>/arm/joints</topic>"
                    "<update_rate>40</update_rate></plugin>"));
  EXPECT_EQ(state(w).topic, "/arm/joints");
  w.step(25);
  // Ascending entity id (Gazebo's std::set), the duplicate once.
  EXPECT_EQ(names(state(w)), (std::vector<std::string>{"shoulder", "elbow"}));
  EXPECT_EQ(state(w).sequence, 1u);  // at 25 ms
}

TEST(JointStatePublisher, UnknownJointIsRefused) {
  // Deliberate difference: Gazebo logs an error and publishes the other joints.
  EXPECT_THAT(
      testing::load_error(arm(std::string(kOpen) + "<joint_name>wrist</joint_name></plugin>")),
      ::testing::HasSubstr("'wrist' is not a joint of model 'w::arm'"));
}

}  // namespace
}  // namespace kestrel::systems
