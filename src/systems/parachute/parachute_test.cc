// ParachuteSystem (PX4's plugin): nothing until the servo output exceeds the threshold; then,
// from the next step, drag −½·ρ·CdA·|v|·v (ρ 1.225) and damping −c·ω, latched; a falling body
// reaches the terminal speed √(2mg/(ρ·CdA)); reset stows it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

std::string plane_world(const std::string& params) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="plane"><pose>0 0 1000 0 0 0</pose><link name="base_link">
        <inertial><mass>2</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      </link>
      <plugin filename="ParachutePlugin" name="gz::sim::systems::ParachuteSystem">)" +
         params + "</plugin></model></world></sdf>";
}

c::DoubleInput& servo(LoadedWorld& w) {
  return w.r().get<c::TopicInputs>(w.find("w::plane")).real.at(0);
}

TEST(ParachuteSystem, DeploysAboveTheThresholdAndFallsAtTerminalSpeed) {
  testing::WrenchProbe p(plane_world("<cd_a>0.64</cd_a><angular_damping>1.0</angular_damping>"),
                         "w::plane::base_link");
  EXPECT_EQ(servo(p.w).topic, "/model/plane/servo_6");
  p.w.step(500);
  EXPECT_EQ(p.wrench.force.Length(), 0);
  servo(p.w).value = 0.0;  // not above the threshold 0
  ++servo(p.w).count;
  p.w.step(10);
  EXPECT_EQ(p.wrench.force.Length(), 0);
  servo(p.w).value = 1.0;
  ++servo(p.w).count;
  p.w.step(1);
  EXPECT_EQ(p.wrench.force.Length(), 0);  // PX4's plugin pulls from the next step
  const double vz = p.w.r().get<c::WorldLinearVelocity>(p.w.find("w::plane::base_link")).value.Z();
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.Z(), 0.5 * 1.225 * 0.64 * vz * vz, 0.02 * vz * vz);
  servo(p.w).value = -1.0;  // latched
  ++servo(p.w).count;
  p.w.step(20000);
  const double terminal = std::sqrt(2 * 2 * 9.8 / (1.225 * 0.64));
  EXPECT_NEAR(p.w.r().get<c::WorldLinearVelocity>(p.w.find("w::plane::base_link")).value.Z(),
              -terminal, 1e-3 * terminal);
  p.w.runner->reset_now();
  p.w.step(10);
  EXPECT_EQ(p.wrench.force.Length(), 0);
}

TEST(ParachuteSystem, TopicsAndRefusedParameters) {
  LoadedWorld w(plane_world("<servo_index>3</servo_index>"));
  EXPECT_EQ(servo(w).topic, "/model/plane/servo_3");
  LoadedWorld t(plane_world("<trigger_topic>/chute</trigger_topic>"));
  EXPECT_EQ(servo(t).topic, "/chute");
  EXPECT_THAT(testing::load_error(plane_world("<link_name>wing</link_name>")),
              ::testing::HasSubstr("wing"));
  EXPECT_THAT(testing::load_error(plane_world("<cda>1</cda>")), ::testing::HasSubstr("cda"));
}

}  // namespace
}  // namespace kestrel::systems
