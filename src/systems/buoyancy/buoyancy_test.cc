// Buoyancy: the upthrust ρ·V·g of every enabled link from its collision shapes' volume (uniform)
// or from the slices of each shape between density layers (graded), with its moment; a body of
// the fluid's density holds its depth, denser ones sink, lighter ones rise; Gazebo's buoyancy
// demo world (examples/worlds/buoyancy.sdf) rebuilt with its numbers behaves as its comment
// says; gz-sim's buoyancy integration test volumes.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

constexpr double kG = 9.8;

std::string world(const std::string& buoyancy, const std::string& models,
                  const std::string& gravity = "0 0 -9.8") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>)" +
         gravity + R"(</gravity>
    <plugin filename="gz-sim-buoyancy-system" name="gz::sim::systems::Buoyancy">)" +
         buoyancy + "</plugin>" + models + "</world></sdf>";
}

// A one-link model with `collisions` (XML) and mass `mass`.
std::string body(const std::string& name, const std::string& pose, double mass,
                 const std::string& collisions, const std::string& extra = "") {
  return "<model name=\"" + name + "\"><pose>" + pose + R"(</pose><link name="link">
      <inertial><mass>)" +
         fmt::format("{:.17g}", mass) +
         R"(</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>)" +
         collisions + "</link>" + extra + "</model>";
}

std::string box(const std::string& size, const std::string& pose = "0 0 0 0 0 0") {
  return "<collision name=\"c" + size.substr(0, 3) + "\"><pose>" + pose +
         "</pose><geometry><box><size>" + size + "</size></box></geometry></collision>";
}
std::string sphere(double r) {
  return "<collision name=\"s\"><geometry><sphere><radius>" + std::to_string(r) +
         "</radius></sphere></geometry></collision>";
}

TEST(Buoyancy, UniformUpthrustAndItsMomentFromTheCollisionVolume) {
  // PX4 bluerov2's hull box, 2 cm above the link origin, rolled 0.3 rad.
  testing::WrenchProbe p(
      world("<uniform_fluid_density>1000</uniform_fluid_density>",
            body("rov", "0 0 -2 0.3 0 0", 13, box("0.50 0.25 0.108", "0 0 0.02 0 0 0"))),
      "w::rov::link");
  p.w.step(1);
  const double V = 0.5 * 0.25 * 0.108;
  EXPECT_NEAR(p.wrench.force.Z(), 1000 * V * kG, 1e-9);
  EXPECT_NEAR(p.wrench.force.X(), 0, 1e-12);
  // Moment about the link origin: (R·cov) × F.
  const auto rot = ignition::math::Quaterniond(0.3, 0, 0);
  const Vector3d expected = rot.RotateVector({0, 0, 0.02}).Cross(p.wrench.force);
  EXPECT_NEAR((p.wrench.torque - expected).Length(), 0, 1e-12);
  EXPECT_GT(std::abs(expected.X()), 0.01);
}

TEST(Buoyancy, VolumesOfEveryShapeAsGazeboComputesThem) {
  // gz-sim's buoyancy test: the submarine's hull (cylinder r 0.2, l 2) is 0.2513 m³.
  const double rho = 1000;
  struct Case {
    std::string geometry;
    double volume;
  };
  const Case cases[] = {
      {"<cylinder><radius>0.2</radius><length>2</length></cylinder>", 0.25132741228718347},
      {"<cylinder><radius>0.3</radius><length>2.6</length></cylinder>", 0.735133},
      {"<capsule><radius>0.1</radius><length>0.5</length></capsule>",
       M_PI * 0.01 * 0.5 + 4.0 / 3 * M_PI * 0.001},
      {"<ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid>", 4.0 / 3 * M_PI * 0.006},
      {"<sphere><radius>0.5</radius></sphere>", 4.0 / 3 * M_PI * 0.125},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.geometry);
    testing::WrenchProbe p(
        world("<uniform_fluid_density>1000</uniform_fluid_density>",
              body("b", "0 0 -3 0 0 0", 1,
                   "<collision name=\"c\"><geometry>" + k.geometry + "</geometry></collision>")),
        "w::b::link");
    p.w.step(1);
    EXPECT_NEAR(p.wrench.force.Z() / (rho * kG), k.volume, 1e-6);
  }
}

TEST(Buoyancy, FluidDensityBodyHoldsDepthDenserSinksLighterRises) {
  const double r = 0.1, V = 4.0 / 3 * M_PI * r * r * r;
  LoadedWorld w(world("<uniform_fluid_density>1000</uniform_fluid_density>",
                      body("neutral", "0 0 -5 0 0 0", 1000 * V, sphere(r)) +
                          body("dense", "2 0 -5 0 0 0", 1500 * V, sphere(r)) +
                          body("light", "4 0 -5 0 0 0", 500 * V, sphere(r))));
  w.step(2000);
  auto z = [&](const std::string& m) {
    return w.r().get<c::WorldPose>(w.find("w::" + m + "::link")).value.Pos().Z();
  };
  EXPECT_NEAR(z("neutral"), -5, 1e-9);
  // Net acceleration g·(ρ_f/ρ_b − 1): ½·a·t² after 2 s.
  EXPECT_NEAR(z("dense"), -5 + 0.5 * kG * (1000.0 / 1500 - 1) * 4, 0.01);
  EXPECT_NEAR(z("light"), -5 + 0.5 * kG * (1000.0 / 500 - 1) * 4, 0.02);
}

TEST(Buoyancy, GradedLayersCutTheShapeAtEachHeight) {
  // Water (1000) below z = 0, air (1.2) above: a 1 m cube whose centre is 0.2 m above the
  // surface has 0.3 m³ in the water (centre −0.15 m) and 0.7 m³ in the air (centre +0.35 m).
  const std::string graded = R"(<graded_buoyancy><default_density>1000</default_density>
      <density_change><above_depth>0</above_depth><density>1.2</density></density_change>
      </graded_buoyancy>)";
  testing::WrenchProbe p(world(graded, body("cube", "0.5 0 0.2 0 0 0", 100, box("1 1 1"))),
                         "w::cube::link");
  p.w.step(1);
  const double f_water = 1000 * 0.3 * kG, f_air = 1.2 * 0.7 * kG;
  EXPECT_NEAR(p.wrench.force.Z(), f_water + f_air, 1e-9);
  // The slices act at their centres of volume, on the link's axis: no moment.
  EXPECT_NEAR(p.wrench.torque.Length(), 0, 1e-9);

  // Offset from the link origin (collision 0.5 m along x): the moment is the arm × force.
  testing::WrenchProbe q(
      world(graded, body("cube", "0 0 0.2 0 0 0", 100, box("1 1 1", "0.5 0 0 0 0 0"))),
      "w::cube::link");
  q.w.step(1);
  EXPECT_NEAR(q.wrench.torque.Y(), -0.5 * (f_water + f_air), 1e-9);

  // Every shape is cut: an upright cylinder (r 0.2, l 1) and a capsule (r 0.1, l 0.4) with
  // their centres at the surface have half their volume in each fluid; an ellipsoid
  // (0.1, 0.2, 0.3) whose centre is 0.15 m below has the cap above of height 0.15:
  // V_cap = π·a·b·h²·(3c − h)/(3c²).
  struct Case {
    std::string geometry, z;
    double below;  // volume in the water [m³]
    double total;
  };
  const double cyl = M_PI * 0.04, cap = M_PI * 0.01 * 0.4 + 4.0 / 3 * M_PI * 0.001;
  const double ell = 4.0 / 3 * M_PI * 0.1 * 0.2 * 0.3;
  const double ell_cap = M_PI * 0.1 * 0.2 * 0.15 * 0.15 * (3 * 0.3 - 0.15) / (3 * 0.09);
  const Case cases[] = {
      {"<cylinder><radius>0.2</radius><length>1</length></cylinder>", "0", cyl / 2, cyl},
      {"<capsule><radius>0.1</radius><length>0.4</length></capsule>", "0", cap / 2, cap},
      {"<ellipsoid><radii>0.1 0.2 0.3</radii></ellipsoid>", "-0.15", ell - ell_cap, ell},
      {"<sphere><radius>0.3</radius></sphere>", "0", 2.0 / 3 * M_PI * 0.027,
       4.0 / 3 * M_PI * 0.027}};
  for (const auto& k : cases) {
    SCOPED_TRACE(k.geometry);
    testing::WrenchProbe c(world(graded, body("b", "0 0 " + k.z + " 0 0 0", 1,
                                              "<collision name=\"c\"><geometry>" + k.geometry +
                                                  "</geometry></collision>")),
                           "w::b::link");
    c.w.step(1);
    EXPECT_NEAR(c.wrench.force.Z(), (1000 * k.below + 1.2 * (k.total - k.below)) * kG, 1e-9);
  }
}

TEST(Buoyancy, GradedFloatingBoxSettlesAtItsDraft) {
  // 250 kg in a 1 m cube: floats with V_sub = (250 − 1.2)/(1000 − 1.2) m³ submerged; a linear
  // heave damping (Hydrodynamics) settles it.
  const std::string graded = R"(<graded_buoyancy><default_density>1000</default_density>
      <density_change><above_depth>0</above_depth><density>1.2</density></density_change>
      </graded_buoyancy>)";
  const std::string damping = R"(<plugin filename="gz-sim-hydrodynamics-system"
      name="gz::sim::systems::Hydrodynamics"><link_name>link</link_name><zW>-2000</zW>
      <kP>-500</kP><mQ>-500</mQ></plugin>)";
  LoadedWorld w(world(graded, body("cube", "0 0 1 0 0 0", 250, box("1 1 1"), damping)));
  w.step(20000);
  const double v_sub = (250 - 1.2) / (1000 - 1.2);
  EXPECT_NEAR(w.r().get<c::WorldPose>(w.find("w::cube::link")).value.Pos().Z(), 0.5 - v_sub, 1e-3);
}

TEST(Buoyancy, EnableRestrictsTheLinks) {
  LoadedWorld w(
      world("<uniform_fluid_density>1000</uniform_fluid_density>"
            "<enable>kept::link</enable>",
            body("kept", "0 0 -5 0 0 0", 1, sphere(0.1)) +
                body("other", "1 0 -5 0 0 0", 1, sphere(0.1))));
  w.step(100);
  EXPECT_GT(w.r().get<c::WorldPose>(w.find("w::kept::link")).value.Pos().Z(), -5);
  EXPECT_LT(w.r().get<c::WorldPose>(w.find("w::other::link")).value.Pos().Z(), -5);
}

// Gazebo's buoyancy demo (examples/worlds/buoyancy.sdf), rebuilt from its numbers: three
// submarines lying on their side (hull a cylinder) with a four-bladed propeller on a revolute
// joint; "submarine" of the fluid's density floats in place (and carries the demo's
// ApplyJointForce and four LiftDrag blades in water), "submarine_sinking" is denser and sinks,
// "submarine_buoyant" is lighter and floats up.
std::string submarine(const std::string& name, double x, double body_z, double body_mass,
                      double radius, double length, double prop_z, double prop_mass,
                      double blade_width, bool driven) {
  std::string blades;
  const char* poses[] = {"0.3433402 0 0 -0.785398 0 0", "0 0.3433402 0 -0.785398 0 1.570796",
                         "-0.3433402 0 0 0.785398 0 0", "0 -0.3433402 0 0.785398 0 1.570796"};
  for (int i = 0; i < 4; ++i) {
    blades += "<collision name=\"blade" + std::to_string(i) + "\"><pose>" + poses[i] +
              "</pose><geometry><box><size>0.5 " + std::to_string(blade_width) +
              " 0.05455</size></box></geometry></collision>";
  }
  std::string m =
      "<model name=\"" + name + "\"><pose>" + std::to_string(x) +
      " 0 0 1.5707963267948966 0 0</pose><link name=\"body\"><pose>0 0 " + std::to_string(body_z) +
      " 0 0 0</pose><inertial><mass>" + std::to_string(body_mass) +
      "</mass><inertia><ixx>86.3</ixx><iyy>86.3</iyy><izz>5.03</izz></inertia>"
      "</inertial><collision name=\"hull\"><geometry><cylinder><radius>" +
      std::to_string(radius) + "</radius><length>" + std::to_string(length) +
      "</length></cylinder></geometry></collision></link>"
      "<link name=\"propeller\"><pose>0 0 " +
      std::to_string(prop_z) + " 3.14159 0 0</pose><inertial><mass>" + std::to_string(prop_mass) +
      "</mass><inertia><ixx>0.46</ixx><iyy>0.46</iyy><izz>0.909</izz></inertia>"
      "</inertial>" +
      blades +
      "</link><joint name=\"propeller_joint\" type=\"revolute\"><parent>body</parent>"
      "<child>propeller</child><axis><xyz>0 0 1</xyz></axis></joint>";
  if (driven) {
    m += R"(<plugin filename="ignition-gazebo-apply-joint-force-system"
        name="gz::sim::systems::ApplyJointForce"><joint_name>propeller_joint</joint_name></plugin>)";
    const char* blade[][3] = {{"0 -0.7071067811865476 -0.7071067811865475",
                               "0 -0.7071067811865475 0.7071067811865476", "0.35 0 0"},
                              {"-0.7071067811865475 0 -0.7071067811865476",
                               "-0.7071067811865476 0 0.7071067811865475", "0 -0.35 0"},
                              {"0 0.7071067811865475 -0.7071067811865476",
                               "0 -0.7071067811865476 -0.7071067811865475", "-0.35 0 0"},
                              {"0.7071067811865476 0 -0.7071067811865475",
                               "0.7071067811865475 0 0.7071067811865476", "0 0.35 0"}};
    for (const auto& b : blade) {
      m += std::string(R"(<plugin filename="ignition-gazebo-lift-drag-system"
          name="gz::sim::systems::LiftDrag"><air_density>1000</air_density>
          <cla>1.2535816618911175</cla><cla_stall>-1.4326647564469914</cla_stall><cda>0</cda>
          <cda_stall>1.4326647564469914</cda_stall><alpha_stall>1.396</alpha_stall><a0>0</a0>
          <area>0.27637</area><upward>)") +
           b[0] + "</upward><forward>" + b[1] + "</forward><link_name>propeller</link_name><cp>" +
           b[2] + "</cp></plugin>";
    }
  }
  return m + "</model>";
}

std::string demo_world() {
  return world("<uniform_fluid_density>1000</uniform_fluid_density>",
               submarine("submarine", 0, 0, 251.32741228718348, 0.2, 2, 1.09, 21.82, 0.2, true) +
                   submarine("submarine_sinking", 5, -1.07935, 1102.6990214100174, 0.3, 2.6, 0.3455,
                             25.2312297, 0.154178, false) +
                   submarine("submarine_buoyant", -5, -1.07935, 367.5663404700058, 0.3, 2.6, 0.3455,
                             8.4104099, 0.154178, false));
}

TEST(Buoyancy, GazeboBuoyancyDemoBehavesAsItsCommentSays) {
  LoadedWorld w(demo_world());
  auto pos = [&](const std::string& m) {
    return w.r().get<c::WorldPose>(w.find("w::" + m + "::body")).value.Pos();
  };
  const Vector3d sub0 = pos("submarine"), sink0 = pos("submarine_sinking"),
                 up0 = pos("submarine_buoyant");
  for (int s = 0; s < 10; ++s) {
    w.step(300);
    // gz-sim's test: the neutral submarine within 1 cm of where it started.
    EXPECT_NEAR((pos("submarine") - sub0).Length(), 0, 1e-2);
    EXPECT_LT(pos("submarine_sinking").Z(), sink0.Z());
    EXPECT_GT(pos("submarine_buoyant").Z(), up0.Z());
  }
  EXPECT_LT(pos("submarine_sinking").Z(), sink0.Z() - 1.0);
  EXPECT_GT(pos("submarine_buoyant").Z(), up0.Z() + 1.0);
}

TEST(Buoyancy, RefusedConfigurations) {
  using testing::load_error;
  EXPECT_THAT(load_error(world("<uniform_fluid_density>1000</uniform_fluid_density><densty>1"
                               "</densty>",
                               "")),
              ::testing::HasSubstr("densty"));
  EXPECT_THAT(load_error(R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
      <model name="m"><link name="l"/><plugin filename="gz-sim-buoyancy-system"
      name="gz::sim::systems::Buoyancy"/></model></world></sdf>)"),
              ::testing::HasSubstr("<world>"));
}

}  // namespace
}  // namespace kestrel::systems
