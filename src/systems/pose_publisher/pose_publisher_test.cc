// PosePublisher: gz-sim's pose_publisher_system integration test ported (its PublishCmd on
// Gazebo's pose_publisher.sdf from ../shared, the other cases on inline equivalents of its test
// world). The poses published are the entities' Pose components (relative to their parents),
// which Physics keeps true: a pendulum's link poses are checked against them every step.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using testing::LoadedWorld;

// A double pendulum on a base (Gazebo's pose_publisher.sdf model, collisions only), with an
// IMU on its upper link, at `pose`, with a PosePublisher configured by `params`.
std::string pendulum(const std::string& name, const std::string& pose, const std::string& params) {
  return R"(
    <model name=")" +
         name + R"(">
      <pose>)" +
         pose + R"(</pose>
      <link name="base">
        <inertial><mass>100</mass></inertial>
        <collision name="col_plate_on_ground"><pose>0 0 0.01 0 0 0</pose>
          <geometry><cylinder><radius>0.8</radius><length>0.02</length></cylinder></geometry>
        </collision>
        <collision name="col_pole"><pose>-0.275 0 1.1 0 0 0</pose>
          <geometry><box><size>0.2 0.2 2.2</size></box></geometry></collision>
      </link>
      <link name="upper_link">
        <pose>0 0 2.1 -1.5708 0 0</pose>
        <inertial><pose>0 0 0.5 0 0 0</pose><mass>1</mass></inertial>
        <collision name="col_upper_joint"><pose>-0.05 0 0 0 1.5708 0</pose>
          <geometry><cylinder><radius>0.1</radius><length>0.3</length></cylinder></geometry>
        </collision>
        <collision name="col_upper_middle"><pose>0 0 0.5 0 0 0</pose>
          <geometry><box><size>0.1 0.1 0.9</size></box></geometry></collision>
        <sensor name="imu_sensor" type="imu"><pose>0 0 0.5 0 0 0</pose></sensor>
      </link>
      <link name="lower_link">
        <pose>0.25 1.0 2.1 -2 0 0</pose>
        <inertial><pose>0 0 0.5 0 0 0</pose><mass>1</mass></inertial>
        <collision name="col_lower_middle"><pose>0 0 0.5 0 0 0</pose>
          <geometry><box><size>0.1 0.1 0.9</size></box></geometry></collision>
      </link>
      <joint name="upper_joint" type="revolute"><parent>base</parent><child>upper_link</child>
        <axis><xyz>1.0 0 0</xyz></axis></joint>
      <joint name="lower_joint" type="revolute"><parent>upper_link</parent>
        <child>lower_link</child><axis><xyz>1.0 0 0</xyz></axis></joint>
      <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">)" +
         params + R"(
      </plugin>
    </model>)";
}

std::string world(const std::string& models) {
  return R"(<?xml version="1.0"?>
<sdf version="1.6">
  <world name="default">
    <physics name="1ms" type="ode"><max_step_size>0.001</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <model name="ground_plane"><static>true</static>
      <link name="link"><collision name="collision"><geometry><plane><normal>0 0 1</normal>
        <size>100 100</size></plane></geometry></collision></link>
    </model>)" +
         models + R"(
  </world>
</sdf>)";
}

constexpr const char* kLinksAndSensor = R"(
        <publish_link_pose>true</publish_link_pose>
        <publish_sensor_pose>true</publish_sensor_pose>
        <publish_collision_pose>false</publish_collision_pose>
        <publish_visual_pose>false</publish_visual_pose>
        <publish_nested_model_pose>false</publish_nested_model_pose>)";

// Every PosesOutput message of `model`'s publisher `index` over n steps, with the Pose
// components of the named entities seen after each step (Gazebo's test records them in
// PostUpdate).
struct Published {
  std::vector<c::PosesOutput> messages;
  std::map<std::string, std::vector<Pose3d>> truth;  // by child frame
};
Published run(LoadedWorld& w, ecs::Entity model, std::size_t index, int n,
              const std::vector<std::string>& entities, const std::string& world = "default") {
  Published p;
  std::uint64_t seen = 0;
  for (int i = 0; i < n; ++i) {
    w.step();
    for (const auto& e : entities) {
      p.truth[e].push_back(w.r().get<c::Pose>(w.find(world + "::" + e)).value);
    }
    const auto& out = w.r().get<c::TopicOutputs>(model).poses[index];
    if (out.sequence != seen) {
      seen = out.sequence;
      p.messages.push_back(out);
    }
  }
  return p;
}

// PublishCmd on Gazebo's own example world (../shared/worlds/gz/pose_publisher.sdf: links only,
// every step): each step one Pose per link (3), named and framed by scoped names without the
// world ("double_pendulum_with_base::upper_link" in "double_pendulum_with_base"), stamped with
// the step's sim time, equal to the link's Pose after that step.
TEST(GazeboPosePublisherTest, PublishCmdOnGazebosWorld) {
  const auto file =
      std::filesystem::path(KESTREL_SHARED_DIR) / "worlds" / "gz" / "pose_publisher.sdf";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "corpus world not found: " << file;
  std::stringstream text;
  text << std::ifstream(file).rdbuf();
  LoadedWorld w(text.str());
  const ecs::Entity model = w.find("pose_publisher::double_pendulum_with_base");
  const std::string m = "double_pendulum_with_base";
  const auto& out = w.r().get<c::TopicOutputs>(model).poses.at(0);
  EXPECT_EQ(out.topic, "/model/double_pendulum_with_base/pose");
  EXPECT_FALSE(out.vector);
  const auto p = run(w, model, 0, 1000, {m + "::base", m + "::upper_link", m + "::lower_link"},
                     "pose_publisher");
  ASSERT_EQ(p.messages.size(), 1000u);
  for (std::size_t i = 0; i < p.messages.size(); ++i) {
    const auto& msg = p.messages[i];
    EXPECT_EQ(msg.stamp, Duration{std::chrono::milliseconds(i + 1)});
    ASSERT_EQ(msg.items.size(), 3u);
    for (const auto& item : msg.items) {
      EXPECT_EQ(item.frame_id, m);
      EXPECT_EQ(item.child_frame_id, item.name);
      ASSERT_TRUE(p.truth.count(item.name)) << item.name;
      EXPECT_EQ(item.pose, p.truth.at(item.name)[i]) << item.name << " " << i;
    }
  }
  // The pendulum swings: the poses published are not constants.
  EXPECT_NE(p.truth.at(m + "::lower_link").front(), p.truth.at(m + "::lower_link").back());
}

// PublishCmd with publish_sensor_pose (its test world): 4 poses per step, the sensor's framed
// by its link.
TEST(GazeboPosePublisherTest, PublishCmdWithSensor) {
  LoadedWorld w(world(pendulum("double_pendulum_with_base", "0 0 0 0 0 0", kLinksAndSensor)));
  const ecs::Entity model = w.find("default::double_pendulum_with_base");
  const std::string m = "double_pendulum_with_base";
  const auto p =
      run(w, model, 0, 100,
          {m + "::base", m + "::upper_link", m + "::lower_link", m + "::upper_link::imu_sensor"});
  ASSERT_EQ(p.messages.size(), 100u);
  for (std::size_t i = 0; i < p.messages.size(); ++i) {
    ASSERT_EQ(p.messages[i].items.size(), 4u);
    for (const auto& item : p.messages[i].items) {
      EXPECT_EQ(item.frame_id,
                item.name == m + "::upper_link::imu_sensor" ? m + "::upper_link" : m);
      EXPECT_EQ(item.pose, p.truth.at(item.name)[i]) << item.name;
    }
  }
}

// StaticPosePublisher: with static_publisher and use_pose_vector_msg, the links a joint moves
// (upper, lower; the canonical base is not) go to .../pose every step as one Pose_V, the rest
// (base, the sensor) to .../pose_static.
TEST(GazeboPosePublisherTest, StaticPosePublisher) {
  const std::string m = "double_pendulum_static_pose_publisher";
  LoadedWorld w(world(pendulum(m, "5 0 0 0 0 0",
                               std::string(kLinksAndSensor) +
                                   "<static_publisher>true</static_publisher>"
                                   "<use_pose_vector_msg>true</use_pose_vector_msg>")));
  const ecs::Entity model = w.find("default::" + m);
  const auto& outs = w.r().get<c::TopicOutputs>(model).poses;
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].topic, "/model/" + m + "/pose");
  EXPECT_EQ(outs[1].topic, "/model/" + m + "/pose_static");
  EXPECT_TRUE(outs[0].vector && outs[1].vector);
  const std::vector<std::string> all = {m + "::base", m + "::upper_link", m + "::lower_link",
                                        m + "::upper_link::imu_sensor"};
  const auto dyn = run(w, model, 0, 100, all);
  ASSERT_EQ(dyn.messages.size(), 100u);
  for (std::size_t i = 0; i < dyn.messages.size(); ++i) {
    ASSERT_EQ(dyn.messages[i].items.size(), 2u);
    for (const auto& item : dyn.messages[i].items) {
      EXPECT_TRUE(item.name == m + "::upper_link" || item.name == m + "::lower_link");
      EXPECT_EQ(item.pose, dyn.truth.at(item.name)[i]);
    }
  }
  const auto& stat = w.r().get<c::TopicOutputs>(model).poses[1];
  ASSERT_EQ(stat.items.size(), 2u);
  EXPECT_EQ(stat.items[0].name, m + "::base");
  EXPECT_EQ(stat.items[1].name, m + "::upper_link::imu_sensor");
  EXPECT_EQ(stat.items[1].frame_id, m + "::upper_link");
}

// UpdateFrequency and StaticPoseUpdateFrequency: update_frequency / static_update_frequency 100
// over 1000 steps: 100 messages, stamps 10 ms apart (Gazebo: 100 ± 10 Hz).
TEST(GazeboPosePublisherTest, UpdateFrequencies) {
  const std::string models = R"(
    <model name="test_update_freq"><link name="link1"/>
      <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
        <publish_link_pose>true</publish_link_pose><update_frequency>100</update_frequency>
      </plugin></model>
    <model name="test_static_pose_update_freq"><link name="link1"/>
      <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
        <publish_link_pose>true</publish_link_pose><static_publisher>true</static_publisher>
        <static_update_frequency>100</static_update_frequency>
      </plugin></model>)";
  LoadedWorld w(world(models));
  const auto a = run(w, w.find("default::test_update_freq"), 0, 1000, {});
  w.runner->reset_now();
  const auto b = run(w, w.find("default::test_static_pose_update_freq"), 1, 1000, {});
  for (const auto* p : {&a, &b}) {
    ASSERT_EQ(p->messages.size(), 100u);
    const double span = to_seconds(p->messages.back().stamp - p->messages.front().stamp);
    EXPECT_NEAR(p->messages.size() / span, 100.0, 10.0);
    EXPECT_EQ(p->messages[1].stamp - p->messages[0].stamp, Duration{std::chrono::milliseconds(10)});
  }
}

// NestedModelLoadPlugin (nested_model.sdf): a PosePublisher in a nested model publishing only
// its own pose: topic /model/model_00/model/model_01/pose, child frame model_00::model_01, pose
// (1, 0, 0). (Gazebo runs that world with its kinematic TPE engine; here gravity is off.)
TEST(GazeboPosePublisherTest, NestedModelLoadPlugin) {
  LoadedWorld w(R"(<?xml version="1.0"?>
<sdf version="1.7">
  <world name="default">
    <physics name="1ms" type="ignored"><max_step_size>0.001</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 0</gravity>
    <model name="model_00"><pose>0 0 0.5 0 0 0</pose>
      <link name="link_00"><collision name="collision_00"><geometry><sphere><radius>0.5</radius>
        </sphere></geometry></collision></link>
      <model name="model_01"><pose>1 0 0.0 0 0 0</pose>
        <link name="link_01"><pose>0.25 0 0.0 0 0 0</pose><collision name="collision_01">
          <geometry><box><size>1 1 1</size></box></geometry></collision></link>
        <plugin filename="gz-sim-pose-publisher-system" name="gz::sim::systems::PosePublisher">
          <publish_link_pose>false</publish_link_pose>
          <publish_sensor_pose>false</publish_sensor_pose>
          <publish_collision_pose>false</publish_collision_pose>
          <publish_visual_pose>false</publish_visual_pose>
          <publish_nested_model_pose>true</publish_nested_model_pose>
          <publish_model_pose>false</publish_model_pose>
          <update_frequency>100</update_frequency>
        </plugin>
      </model>
    </model>
  </world>
</sdf>)");
  const ecs::Entity nested = w.find("default::model_00::model_01");
  EXPECT_EQ(w.r().get<c::TopicOutputs>(nested).poses[0].topic,
            "/model/model_00/model/model_01/pose");
  const auto p = run(w, nested, 0, 1000, {});
  ASSERT_FALSE(p.messages.empty());
  for (const auto& msg : p.messages) {
    ASSERT_EQ(msg.items.size(), 1u);
    EXPECT_EQ(msg.items[0].child_frame_id, "model_00::model_01");
    EXPECT_EQ(msg.items[0].frame_id, "model_00");
    EXPECT_EQ(msg.items[0].pose, Pose3d(1, 0, 0, 0, 0, 0));
  }
}

TEST(PosePublisher, ResetPublishesTheSameAgain) {
  LoadedWorld w(world(pendulum("p", "0 0 0 0 0 0", kLinksAndSensor)));
  const ecs::Entity model = w.find("default::p");
  const auto first = run(w, model, 0, 200, {});
  w.runner->reset_now();
  const auto second = run(w, model, 0, 200, {});
  ASSERT_EQ(first.messages.size(), second.messages.size());
  for (std::size_t i = 0; i < first.messages.size(); ++i) {
    ASSERT_EQ(first.messages[i].items.size(), second.messages[i].items.size());
    for (std::size_t k = 0; k < first.messages[i].items.size(); ++k) {
      EXPECT_EQ(first.messages[i].items[k].pose, second.messages[i].items[k].pose);
    }
  }
}

}  // namespace
}  // namespace kestrel::systems
