// ApplyJointForce: gz-sim's apply_joint_force_system integration test on an equivalent
// world, and α = τ / I on a rotor hinged to the world.
#include <gtest/gtest.h>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/joint_worlds.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

constexpr const char* kPlugin = R"(<plugin filename="gz-sim-apply-joint-force-system"
    name="gz::sim::systems::ApplyJointForce"><joint_name>j1</joint_name></plugin>)";

void command(LoadedWorld& w, const std::string& joint, double value) {
  auto& ch = testing::double_input(w, joint);
  ch.value = value;
  ++ch.count;
}

TEST(ApplyJointForce, GazeboJointForceCommand) {
  LoadedWorld w(testing::gz_world(testing::gz_rotor_model("joint_force_test", "j1", kPlugin)),
                false);
  const std::string j = "w::joint_force_test::j1";
  std::vector<double> seen;
  w.runner->add_system(
      std::make_unique<testing::PreUpdateProbe>([&](const UpdateInfo&, ecs::Registry& r) {
        if (auto* f = r.try_get<c::JointForceCmd>(w.find(j))) {
          seen.push_back(f->data[0]);
        }
      }),
      w.runner->world(), Element::empty("plugin"), "probe", "test");
  w.runner->configure();
  EXPECT_EQ(testing::double_input(w, j).topic, "/model/joint_force_test/joint/j1/cmd_force");
  w.step(10);
  ASSERT_EQ(seen.size(), 10u);
  for (double f : seen) EXPECT_NEAR(0, f, 1e-4);
  command(w, j, 0.001);
  w.step(1);
  EXPECT_DOUBLE_EQ(seen.back(), 0.001);
}

TEST(ApplyJointForce, AngularAccelerationIsTorqueOverInertia) {
  LoadedWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="arm"><link name="rotor">
      <inertial><mass>2</mass><inertia><ixx>0.3</ixx><iyy>0.3</iyy><izz>0.25</izz></inertia></inertial>
    </link>
    <joint name="j1" type="revolute"><parent>world</parent><child>rotor</child>
      <axis><xyz>0 0 1</xyz></axis></joint>)" +
                std::string(kPlugin) + "</model></world></sdf>");
  command(w, "w::arm::j1", 0.5);  // τ = 0.5 N·m about z: α = τ / izz = 2 rad/s²
  w.step(1000);
  EXPECT_NEAR(w.r().get<c::JointVelocity>(w.find("w::arm::j1")).data[0], 2.0 * 1.0, 1e-9);
  EXPECT_NEAR(w.r().get<c::AngularAcceleration>(w.find("w::arm::rotor")).value.Z(), 2.0, 1e-9);
  EXPECT_NEAR(w.r().get<c::JointForce>(w.find("w::arm::j1")).data[0], 0.5, 1e-12);
}

}  // namespace
}  // namespace kestrel::systems
