// ApplyLinkWrench: gz-sim's apply_link_wrench_system integration test (FromSdf,
// PersistentFromTopic, instantaneous wrenches) on an equivalent world with the same numbers and
// tolerance, and α = I⁻¹τ for a torque about a principal axis of an asymmetric body.
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
// Which input of the world's TopicInputs: the instantaneous or the persistent wrench topic.
enum class K { kOnce, kPersistent };

constexpr double kTol = 10e-4;  // gz-sim's tol

std::string box(const std::string& name, double y) {
  return R"(<model name=")" + name + R"("><pose>0 )" + std::to_string(y) + R"( 0.5 0 0 0</pose>
    <link name="link">
      <inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      <collision name="collision"><geometry><box><size>1 1 1</size></box></geometry></collision>
    </link></model>)";
}

std::string world() {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="apply_link_wrench">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
      <persistent><entity_name>model1</entity_name><entity_type>model</entity_type>
        <force>50 0 0</force><torque>0 0 0.5</torque></persistent>
      <persistent><entity_name>model2::link</entity_name><entity_type>link</entity_type>
        <force>-100 0 0</force><torque>0 0 -1.0</torque></persistent>
    </plugin>)" +
         box("model1", 0) + box("model2", 2) + box("model3", 4) + box("model4", 6) +
         "</world></sdf>";
}

c::EntityWrench wrench(const std::string& name, int type, double fx, double tz) {
  c::EntityWrench m;
  m.entity.name = name;
  m.entity.type = type;
  m.has_entity = m.has_wrench = true;
  m.force.Set(fx, 0, 0);
  m.torque.Set(0, 0, tz);
  return m;
}

// A message as transport appends it at a step boundary (src/transport/bridges.cc).
void send(LoadedWorld& w, K k, c::EntityWrench m) {
  auto& in = w.r().get<c::TopicInputs>(w.runner->world()).entity_wrench.at(k == K::kOnce ? 0 : 1);
  in.received.push_back(std::move(m));
  ++in.count;
}

void clear(LoadedWorld& w, const std::string& name, int type) {
  auto& in = w.r().get<c::TopicInputs>(w.runner->world()).entity.at(0);
  in.received.push_back(c::EntityRef{0, name, type});
  ++in.count;
}

double accel_x(LoadedWorld& w, const std::string& link) {
  return w.r().get<c::WorldLinearAcceleration>(w.find(link)).value.X();
}

TEST(ApplyLinkWrench, GazeboFromSdf) {
  LoadedWorld w(world());
  const auto& in = w.r().get<c::TopicInputs>(w.runner->world());
  EXPECT_EQ(in.entity_wrench.at(0).topic, "/world/apply_link_wrench/wrench");
  EXPECT_EQ(in.entity_wrench.at(1).topic, "/world/apply_link_wrench/wrench/persistent");
  EXPECT_EQ(in.entity.at(0).topic, "/world/apply_link_wrench/wrench/clear");
  for (int i = 0; i < 100; ++i) {
    w.step(1);
    EXPECT_NEAR(50.0, accel_x(w, "apply_link_wrench::model1::link"), kTol);
    EXPECT_NEAR(-100.0, accel_x(w, "apply_link_wrench::model2::link"), kTol);
  }
}

TEST(ApplyLinkWrench, GazeboPersistentFromTopicThenClear) {
  LoadedWorld w(world());
  send(w, K::kPersistent, wrench("model3", 2, 50, 0.5));
  send(w, K::kPersistent, wrench("model4::link", 3, -100, -1.0));
  for (int i = 0; i < 100; ++i) {
    w.step(1);
    EXPECT_NEAR(50.0, accel_x(w, "apply_link_wrench::model3::link"), kTol);
    EXPECT_NEAR(-100.0, accel_x(w, "apply_link_wrench::model4::link"), kTol);
  }
  clear(w, "model3", 2);
  clear(w, "model4::link", 3);
  for (int i = 0; i < 100; ++i) {
    w.step(1);
    EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model3::link"), kTol);
    EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model4::link"), kTol);
  }
}

TEST(ApplyLinkWrench, GazeboInstantaneousWrenchActsOneStep) {
  LoadedWorld w(world());
  w.step(1);
  send(w, K::kOnce, wrench("model3", 2, 50, 0.5));
  auto id = wrench("", 0, -100, -1.0);
  id.entity.id = w.find("apply_link_wrench::model4::link");
  send(w, K::kOnce, id);
  w.step(1);
  EXPECT_NEAR(50.0, accel_x(w, "apply_link_wrench::model3::link"), kTol);
  EXPECT_NEAR(-100.0, accel_x(w, "apply_link_wrench::model4::link"), kTol);
  w.step(1);
  EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model3::link"), kTol);
  EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model4::link"), kTol);
}

// An asymmetric body at rest, torque about its principal z axis (tilted in the world):
// α_W = R I⁻¹ Rᵀ τ_W, exact for ω = 0 (no gyroscopic term in the first step).
TEST(ApplyLinkWrench, AngularAccelerationIsInverseInertiaTimesTorque) {
  LoadedWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>
    <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
      <persistent><entity_name>body</entity_name><entity_type>model</entity_type>
        <torque>0.3 -0.2 0.5</torque></persistent>
    </plugin>
    <model name="body"><pose>0 0 1 0.3 0.2 0.1</pose><link name="link">
      <inertial><mass>2</mass><inertia><ixx>0.2</ixx><iyy>0.3</iyy><izz>0.4</izz></inertia></inertial>
    </link></model></world></sdf>)");
  w.step(1);
  const auto link = w.find("w::body::link");
  const ignition::math::Matrix3d R(ignition::math::Quaterniond(0.3, 0.2, 0.1));
  const ignition::math::Matrix3d I_inv(1 / 0.2, 0, 0, 0, 1 / 0.3, 0, 0, 0, 1 / 0.4);
  const auto alpha = R * I_inv * R.Transposed() * ignition::math::Vector3d(0.3, -0.2, 0.5);
  const auto got = w.r().get<c::WorldAngularAcceleration>(link).value;
  EXPECT_NEAR(got.X(), alpha.X(), 1e-9);
  EXPECT_NEAR(got.Y(), alpha.Y(), 1e-9);
  EXPECT_NEAR(got.Z(), alpha.Z(), 1e-9);
}

TEST(ApplyLinkWrench, ResetReturnsToTheSdfWrenches) {
  LoadedWorld w(world());
  clear(w, "model1", 2);
  w.step(5);
  EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model1::link"), kTol);
  w.runner->reset_now();
  w.step(1);
  EXPECT_NEAR(50.0, accel_x(w, "apply_link_wrench::model1::link"), kTol);
}

TEST(ApplyLinkWrench, MessageWithoutWrenchIsRefused) {
  LoadedWorld w(world());
  testing::CapturedLog log;
  auto m = wrench("model3", 2, 50, 0.5);
  m.has_wrench = false;
  send(w, K::kPersistent, m);
  w.step(2);
  EXPECT_NEAR(0.0, accel_x(w, "apply_link_wrench::model3::link"), kTol);
  EXPECT_THAT(log.text(), ::testing::HasSubstr("missing entity or wrench"));
}

TEST(ApplyLinkWrench, BadPersistentIsRefused) {
  EXPECT_THAT(testing::load_error(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <plugin filename="gz-sim-apply-link-wrench-system" name="gz::sim::systems::ApplyLinkWrench">
      <persistent><entity_name>x</entity_name><entity_type>joint</entity_type></persistent>
    </plugin></world></sdf>)"),
              ::testing::HasSubstr("<entity_type> 'joint' is not supported"));
}

}  // namespace
}  // namespace kestrel::systems
