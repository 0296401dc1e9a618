// KineticEnergyMonitor: gz-sim's kinetic_energy_monitor_system integration test on its own
// world (../shared/worlds/gz/test_altimeter.sdf), the kinetic energy against ½mv² + ½ωᵀIω,
// and the threshold.
#include "kinetic_energy_monitor/kinetic_energy_monitor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using testing::LoadedWorld;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const c::DoubleOutput& channel(LoadedWorld& w, const std::string& model) {
  return w.r().get<c::TopicOutputs>(w.find(model)).real.at(0);
}

TEST(KineticEnergyMonitor, GazeboModelFalling) {
  const std::filesystem::path file = KESTREL_SHARED_DIR "/worlds/gz/test_altimeter.sdf";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file << " (../shared absent)";
  LoadedWorld w(read(file));
  EXPECT_EQ(channel(w, "altimeter_sensor::altimeter_model").topic,
            "/model/altimeter_model/kinetic_energy");
  const ecs::Entity link = w.find("altimeter_sensor::altimeter_model::link");
  std::vector<double> published, drops;
  double previous = 0, impact = 0;
  for (int k = 0; k < 1000; ++k) {
    const auto before = channel(w, "altimeter_sensor::altimeter_model").sequence;
    w.step(1);
    const auto& ch = channel(w, "altimeter_sensor::altimeter_model");
    if (ch.sequence != before) published.push_back(ch.value);
    const double energy = world_kinetic_energy(w.r(), link);
    if (previous - energy > 2) drops.push_back(previous - energy);
    impact = std::max(impact, energy);
    previous = energy;
  }
  // The box's centre falls from 3.05 m to 0.05 m: ½mv² at impact = m g h = 0.1 · 9.8 · 3 = 2.94 J.
  EXPECT_NEAR(impact, 0.1 * 9.8 * 3.0, 0.01);
  // Exactly Gazebo's rule: one message for each step whose drop exceeds the threshold, its value.
  EXPECT_EQ(published, drops);
  // Deliberate difference (physics, not the system): Gazebo (ODE's hard contact) stops the box
  // within one step, one message with data > 2. MuJoCo's soft contact spreads the impact over
  // several steps, so no single step loses 2 J and nothing is published on this world.
  EXPECT_EQ(published.size(), 0u);
}

TEST(KineticEnergyMonitor, EnergyIsHalfMvSquaredPlusHalfOmegaIOmega) {
  // A spinning, tumbling body off its origin: the centre of mass 0.1 m along x of the link frame.
  LoadedWorld w(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>
    <model name="m"><pose>0 0 1 0.4 0.1 0.2</pose><link name="l">
      <inertial><pose>0.1 0 0 0 0 0</pose><mass>2</mass>
        <inertia><ixx>0.1</ixx><iyy>0.2</iyy><izz>0.3</izz></inertia></inertial>
    </link>
    <plugin filename="gz-sim-kinetic-energy-monitor-system" name="gz::sim::systems::KineticEnergyMonitor">
      <link_name>l</link_name><kinetic_energy_threshold>1e9</kinetic_energy_threshold></plugin>
    </model></world></sdf>)");
  const auto link = w.find("w::m::l");
  w.r().add<c::LinearVelocityCmd>(w.find("w::m"), ignition::math::Vector3d(1, 2, 0));
  w.r().add<c::AngularVelocityCmd>(w.find("w::m"), ignition::math::Vector3d(0.5, 0, 1));
  w.step(1);
  w.r().remove<c::LinearVelocityCmd>(w.find("w::m"));
  w.r().remove<c::AngularVelocityCmd>(w.find("w::m"));
  w.step(10);
  // Torque-free motion conserves it: ½ m |v_c|² + ½ ω_Bᵀ I ω_B in the principal frame.
  const auto& X = w.r().get<c::WorldPose>(link).value;
  const auto w_W = w.r().get<c::WorldAngularVelocity>(link).value;
  const auto w_B = X.Rot().RotateVectorReverse(w_W);
  const auto v_c =
      w.r().get<c::WorldLinearVelocity>(link).value + w_W.Cross(X.Rot().RotateVector({0.1, 0, 0}));
  const double expected =
      0.5 * 2 * v_c.SquaredLength() +
      0.5 * (0.1 * w_B.X() * w_B.X() + 0.2 * w_B.Y() * w_B.Y() + 0.3 * w_B.Z() * w_B.Z());
  EXPECT_NEAR(world_kinetic_energy(w.r(), link), expected, 1e-12);
  EXPECT_GT(expected, 1.0);
}

TEST(KineticEnergyMonitor, FiresWhenTheDropExceedsTheThreshold) {
  // A 2 kg body moving at 3 m/s (9 J) stopped in one step: a drop of 9 J.
  auto world = [](double threshold) {
    return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
      <physics type="ode"><max_step_size>0.001</max_step_size></physics><gravity>0 0 0</gravity>
      <model name="m"><link name="l"><inertial><mass>2</mass>
        <inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial></link>
      <plugin filename="gz-sim-kinetic-energy-monitor-system" name="gz::sim::systems::KineticEnergyMonitor">
        <link_name>l</link_name><kinetic_energy_threshold>)" +
           std::to_string(threshold) + "</kinetic_energy_threshold></plugin></model></world></sdf>";
  };
  for (const double threshold : {8.9, 9.1}) {
    LoadedWorld w(world(threshold));
    const auto model = w.find("w::m");
    w.r().add<c::LinearVelocityCmd>(model, ignition::math::Vector3d(3, 0, 0));
    w.step(5);
    EXPECT_EQ(channel(w, "w::m").sequence, 0u);  // the energy rose: nothing
    w.r().get<c::LinearVelocityCmd>(model).value = ignition::math::Vector3d::Zero;
    w.step(1);
    EXPECT_EQ(channel(w, "w::m").sequence, threshold < 9 ? 1u : 0u) << threshold;
    if (threshold < 9) {
      EXPECT_NEAR(channel(w, "w::m").value, 9.0, 1e-9);
    }
  }
}

}  // namespace
}  // namespace kestrel::systems
