// Hydrodynamics: a body denser than the fluid sinks at the terminal velocity its damping
// implies, (m − ρV)·g = −zW·w − zWabsW·w²; linear damping decays a velocity exponentially;
// added mass slows the response to a force as m + m_a; the added mass's Coriolis force; a
// current pushes a body at rest; the current topic; reset.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/messages.h"
#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

constexpr double kG = 9.8;

std::string hydro(const std::string& params) {
  return R"(<plugin filename="gz-sim-hydrodynamics-system" name="gz::sim::systems::Hydrodynamics">
      <link_name>link</link_name>)" +
         params + "</plugin>";
}

// A sphere of radius 0.1 m and `mass` in water (Buoyancy 1000 kg/m³), `gravity`.
std::string sphere_world(double mass, const std::string& plugin,
                         const std::string& gravity = "0 0 -9.8") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>)" +
         gravity + R"(</gravity>
    <plugin filename="gz-sim-buoyancy-system" name="gz::sim::systems::Buoyancy">
      <uniform_fluid_density>1000</uniform_fluid_density></plugin>
    <model name="auv"><pose>0 0 -10 0 0 0</pose><link name="link">
      <inertial><mass>)" +
         fmt::format("{:.17g}", mass) +
         R"(</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
      <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
    </link>)" +
         plugin + "</model></world></sdf>";
}

const double kVolume = 4.0 / 3 * M_PI * 0.001;

Vector3d velocity(LoadedWorld& w) {
  return w.r().get<c::WorldLinearVelocity>(w.find("w::auv::link")).value;
}

TEST(Hydrodynamics, DenserBodySinksAtTheTerminalVelocityItsDampingImplies) {
  const double m = 2 * 1000 * kVolume, zW = -20, zWabsW = -30;
  LoadedWorld w(sphere_world(m, hydro("<zW>-20</zW><zWabsW>-30</zWabsW><zDotW>-2</zDotW>")));
  w.step(10000);
  // (m − ρV)·g = −zW·|w| − zWabsW·w²  →  w = (zW + √(zW² − 4·zWabsW·F)) / (2·zWabsW)... as a
  // positive root of 30w² + 20w − F = 0.
  const double F = (m - 1000 * kVolume) * kG;
  const double a = -zWabsW, b = -zW;
  const double terminal = (-b + std::sqrt(b * b + 4 * a * F)) / (2 * a);
  EXPECT_NEAR(velocity(w).Z(), -terminal, 1e-4 * terminal);
  EXPECT_NEAR(velocity(w).X(), 0, 1e-9);
}

TEST(Hydrodynamics, FluidDensityBodyHoldsDepth) {
  LoadedWorld w(sphere_world(1000 * kVolume, hydro("<zW>-20</zW><zWabsW>-30</zWabsW>")));
  w.step(3000);
  EXPECT_NEAR(w.r().get<c::WorldPose>(w.find("w::auv::link")).value.Pos().Z(), -10, 1e-9);
}

TEST(Hydrodynamics, LinearDampingDecaysExponentially) {
  // Zero gravity, u0 = 1 m/s along x, xU = −k: u(t) = u0·e^(−k·t/m).
  const double m = 2.0, k = 4.0;
  LoadedWorld w(sphere_world(m, hydro("<xU>-4</xU>"), "0 0 0"));
  w.r().set(w.find("w::auv"), c::LinearVelocityCmd{{1, 0, 0}});
  w.step(1);
  w.r().remove<c::LinearVelocityCmd>(w.find("w::auv"));  // held while present
  const double u0 = velocity(w).X();
  ASSERT_NEAR(u0, 1, 1e-6);
  w.step(1000);
  EXPECT_NEAR(velocity(w).X(), u0 * std::exp(-k * 1.0 / m), 2e-3);
}

TEST(Hydrodynamics, AddedMassAddsToTheInertiaAgainstAForce) {
  // A constant 10 N push along x in zero gravity: a = F / (m + m_a) with m_a = −xDotU. (Gazebo's
  // ν̇ from the last step makes this diverge for m_a ≥ m: the configure warning says so.)
  const double m = 5.0, ma = 3.0, F = 10.0;
  LoadedWorld w(sphere_world(m, hydro("<xDotU>-3</xDotU><disable_coriolis>true</disable_coriolis>"),
                             "0 0 0"));
  const auto link = w.find("w::auv::link");
  testing::PreUpdateProbe push([&](const UpdateInfo&, ecs::Registry& r) {
    r.get<c::ExternalWorldWrenchCmd>(link).force += Vector3d(F, 0, 0);
  });
  for (int k = 0; k < 2000; ++k) {
    push.pre_update({}, w.r());
    w.step(1);
  }
  const double u1 = velocity(w).X();
  for (int k = 0; k < 1000; ++k) {
    push.pre_update({}, w.r());
    w.step(1);
  }
  EXPECT_NEAR((velocity(w).X() - u1) / 1.0, F / (m + ma), 1e-3 * F / (m + ma));
}

TEST(Hydrodynamics, CoriolisOfTheAddedMass) {
  // Surging at u = 1 m/s while yawing at r = 0.5 rad/s with Ma = diag(−2, −3, …): Gazebo's
  // C_A gives a sway force −Ma(0,0)·u·r = 1 N and a yaw moment (Ma(0,0) − Ma(1,1))·u·v = 0.
  testing::WrenchProbe p(
      sphere_world(5,
                   hydro("<xDotU>-2</xDotU><yDotV>-3</yDotV><disable_added_mass>true"
                         "</disable_added_mass>"),
                   "0 0 0"),
      "w::auv::link");
  p.w.r().set(p.w.find("w::auv"), c::LinearVelocityCmd{{1, 0, 0}});
  p.w.r().set(p.w.find("w::auv"), c::AngularVelocityCmd{{0, 0, 0.5}});
  p.w.step(2);
  // The body has turned by 0.5 mrad: express the force in its frame.
  const auto& X = p.w.r().get<c::WorldPose>(p.w.find("w::auv::link")).value;
  const Vector3d f_B = X.Rot().RotateVectorReverse(p.wrench.force);
  EXPECT_NEAR(f_B.Y(), 2 * 1 * 0.5, 2e-3);
  EXPECT_NEAR(f_B.X(), 0, 2e-3);
}

TEST(Hydrodynamics, CurrentPushesABodyAtRestAndComesFromItsTopic) {
  testing::WrenchProbe p(
      sphere_world(1000 * kVolume, hydro("<xU>-10</xU><default_current>1 0 0</default_current>"),
                   "0 0 0"),
      "w::auv::link");
  p.w.step(1);
  EXPECT_NEAR(p.wrench.force.X(), 10, 1e-9);  // −xU·(c − v)
  auto& in = p.w.r().get<c::TopicInputs>(p.w.find("w::auv")).vector3.at(0);
  EXPECT_EQ(in.topic, "/ocean_current");
  in.value = {0, -2, 0};
  ++in.count;
  p.w.step(1);
  // The body has moved off rest in the first step (10 N on 4.2 kg): −xU·u of that.
  EXPECT_NEAR(p.wrench.force.X(), 0, 0.05);
  EXPECT_EQ(p.wrench.force.Y(), 0);  // yV = 0
}

TEST(Hydrodynamics, NamespacedCurrentTopicAndRefusedInput) {
  LoadedWorld w(sphere_world(1, hydro("<namespace>auv 1</namespace>")));
  EXPECT_EQ(w.r().get<c::TopicInputs>(w.find("w::auv")).vector3.at(0).topic,
            "/model/auv_1/ocean_current");
  EXPECT_THAT(testing::load_error(sphere_world(1, hydro("<xUabsUU>1</xUabsUU>"))),
              ::testing::HasSubstr("xUabsUU"));
  EXPECT_THAT(testing::load_error(sphere_world(1, hydro("<xU>nan</xU>"))),
              ::testing::HasSubstr("xU"));
}

TEST(Hydrodynamics, ResetRepeatsTheRun) {
  LoadedWorld w(sphere_world(2 * 1000 * kVolume, hydro("<zW>-20</zW><zDotW>-1</zDotW>")));
  w.step(500);
  const Vector3d first = velocity(w);
  w.runner->reset_now();
  w.step(500);
  EXPECT_EQ(velocity(w), first);
}

}  // namespace
}  // namespace kestrel::systems
