// BuoyancyEngine: the bladder pushes with −g·(ρ·V − ρ·V_neutral); a command moves V at
// max_inflation_rate to the set point (clamped to [min, max]) and the status topic follows it;
// no fluid above the surface; reset; topics; refused parameters.
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

constexpr double kG = 9.8;

std::string float_world(const std::string& params, const std::string& pose = "0 0 -10 0 0 0") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="glider"><pose>)" +
         pose + R"(</pose><link name="body">
        <inertial><mass>1</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>
      </link>
      <plugin filename="gz-sim-buoyancy-engine-system" name="gz::sim::systems::BuoyancyEngine">
        <link_name>body</link_name>)" +
         params + "</plugin></model></world></sdf>";
}

const std::string kEngine =
    "<namespace>glider</namespace><min_volume>0.0001</min_volume><max_volume>0.002</max_volume>"
    "<default_volume>0.0003</default_volume><neutral_volume>0.0003</neutral_volume>"
    "<max_inflation_rate>0.0001</max_inflation_rate>";

c::DoubleInput& cmd(LoadedWorld& w) {
  return w.r().get<c::TopicInputs>(w.find("w::glider")).real.at(0);
}
const c::DoubleOutput& status(LoadedWorld& w) {
  return w.r().get<c::TopicOutputs>(w.find("w::glider")).real.at(0);
}

TEST(BuoyancyEngine, InflatesAtItsRateAndPushesWithTheExtraVolume) {
  testing::WrenchProbe p(float_world(kEngine), "w::glider::body");
  EXPECT_EQ(cmd(p.w).topic, "/model/glider/buoyancy_engine");
  EXPECT_EQ(status(p.w).topic, "/model/glider/buoyancy_engine/current_volume");
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.Z(), 0, 1e-12);  // at the neutral volume
  cmd(p.w).value = 0.05;                      // clamped to max_volume 0.002
  ++cmd(p.w).count;
  p.w.step(5000);  // 5 s at 1e-4 m³/s: +5e-4 m³
  const double dt = static_cast<float>(0.001);
  EXPECT_NEAR(status(p.w).value, 0.0003 + 5000 * dt * 0.0001, 1e-12);
  EXPECT_NEAR(p.wrench.force.Z(), kG * 1000 * (status(p.w).value - 0.0003), 1e-9);
  p.w.step(20000);  // reaches the (clamped) set point and stays
  EXPECT_NEAR(status(p.w).value, 0.002, 1e-15);
  cmd(p.w).value = 0;  // clamped to min_volume
  ++cmd(p.w).count;
  p.w.step(30000);
  EXPECT_NEAR(status(p.w).value, 0.0001, 1e-15);
  EXPECT_NEAR(p.wrench.force.Z(), kG * 1000 * (0.0001 - 0.0003), 1e-9);
}

TEST(BuoyancyEngine, NoFluidAboveTheSurface) {
  testing::WrenchProbe p(float_world(kEngine + "<surface>0</surface>", "0 0 1 0 0 0"),
                         "w::glider::body");
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.Z(), -kG * 1000 * 0.0003, 1e-9);
}

TEST(BuoyancyEngine, ResetReturnsToTheDefaultVolume) {
  LoadedWorld w(float_world(kEngine));
  cmd(w).value = 0.001;
  ++cmd(w).count;
  w.step(1000);
  EXPECT_GT(status(w).value, 0.0003);
  w.runner->reset_now();
  w.step(1000);
  EXPECT_NEAR(status(w).value, 0.0003, 1e-15);
  EXPECT_THAT(testing::load_error(float_world("<max_volume>1e-6</max_volume>")),
              ::testing::HasSubstr("min_volume"));
  EXPECT_THAT(testing::load_error(float_world("<surfac>0</surfac>")),
              ::testing::HasSubstr("surfac"));
  LoadedWorld plain(float_world(""));
  EXPECT_EQ(cmd(plain).topic, "/buoyancy_engine");
}

}  // namespace
}  // namespace kestrel::systems
