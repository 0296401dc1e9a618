// AdvancedLiftDrag: a whole-aircraft body held in a uniform wind at angles of attack through
// and past stall gives L = ½ρV²S·CL(α) and D = ½ρV²S·CD(α) with CL, CD the blended linear /
// flat-plate model README.md states; side force and moments from β; control surfaces (per
// degree); roll-rate damping; refused input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;

// PX4's advanced_plane (../shared/models/px4/models/advanced_plane): wing numbers.
constexpr double kCL0 = 0.15188, kCLa = 5.015, kCD0 = 0.029, kAR = 6.5, kEff = 0.97,
                 kAlphaStall = 0.3391428111, kArea = 0.34, kMac = 0.22, kRho = 1.2041;

std::string ald(const std::string& extra) {
  return R"(<plugin filename="gz-sim-advanced-lift-drag-system"
      name="gz::sim::systems::AdvancedLiftDrag">
      <CL0>0.15188</CL0><AR>6.5</AR><eff>0.97</eff><CLa>5.015</CLa><CD0>0.029</CD0>
      <alpha_stall>0.3391428111</alpha_stall><area>0.34</area><mac>0.22</mac>
      <air_density>1.2041</air_density><forward>1 0 0</forward><upward>0 0 1</upward>
      <link_name>base_link</link_name>)" +
         extra + "</plugin>";
}

// A heavy body pitched nose-up by `pitch` and yawed by `yaw`, zero gravity, air moving at
// `wind` [m/s] (world).
std::string body_world(double pitch, const std::string& wind, const std::string& extra,
                       double yaw = 0) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity><wind><linear_velocity>)" +
         wind + R"(</linear_velocity></wind>
    <model name="plane"><pose>0 0 10 0 )" +
         std::to_string(-pitch) + " " + std::to_string(yaw) + R"(</pose>
      <link name="base_link">
        <inertial><mass>10000</mass><inertia><ixx>1000</ixx><iyy>1000</iyy><izz>1000</izz></inertia></inertial>
      </link>)" +
         extra + "</model></world></sdf>";
}

struct Probe : testing::WrenchProbe {
  explicit Probe(const std::string& sdf) : WrenchProbe(sdf, "w::plane::base_link") {}
};

// The model as README.md states it (Gazebo's AdvancedLiftDrag): σ blends from the linear
// model to a flat plate about ±α_stall with M = 15.
double sigma(double a) {
  const double M = 15;
  return (1 + std::exp(-M * (a - kAlphaStall)) + std::exp(M * (a + kAlphaStall))) /
         ((1 + std::exp(-M * (a - kAlphaStall))) * (1 + std::exp(M * (a + kAlphaStall))));
}
double cl_of(double a) {
  const double s = sigma(a);
  const double sign = a > 0 ? 1 : (a < 0 ? -1 : 0);
  return (1 - s) * (kCL0 + kCLa * a) + s * 2 * sign * std::sin(a) * std::sin(a) * std::cos(a);
}
double cd_of(double a) {
  const double s = sigma(a), cl = cl_of(a);
  const double cd_fp = 2 / (1 + std::exp(-0.224 - 0.115 * kAR));
  return (1 - s) * (kCD0 + cl * cl / (M_PI * kAR * kEff)) +
         s * std::abs(cd_fp * (0.5 - 0.5 * std::cos(2 * a)));
}

TEST(AdvancedLiftDrag, LiftAndDragThroughAndPastStall) {
  const double V = 15, q = 0.5 * kRho * V * V;
  for (double a : {-0.8, -0.4, -0.1, 0.0, 0.05, 0.2, 0.3, 0.34, 0.4, 0.6, 1.0, 1.4}) {
    SCOPED_TRACE(a);
    Probe p(body_world(a, "-15 0 0", ald("")));
    p.w.step(1);
    // Lift normal to the flow (+z), drag along it (−x).
    EXPECT_NEAR(p.wrench.force.Z(), q * kArea * cl_of(a), 1e-9 * q);
    EXPECT_NEAR(p.wrench.force.X(), -q * kArea * cd_of(a), 1e-9 * q);
    EXPECT_NEAR(p.wrench.force.Y(), 0, 1e-9);
  }
  // Past stall the lift falls: the flat plate's CL at 0.6 rad is below the linear model's.
  EXPECT_LT(cl_of(0.6), 0.8 * (kCL0 + kCLa * kAlphaStall));
}

TEST(AdvancedLiftDrag, SideslipGivesSideForceRollAndYawMoments) {
  // Yawed 0.1 rad left: the air comes from the right (β > 0 in AVL's body axes, y right).
  const double V = 15, q = 0.5 * kRho * V * V, yaw = 0.1;
  const double CYb = -0.258244, Cellb = -0.039250, Cenb = 0.100826;
  Probe p(body_world(
      0, "-15 0 0", ald("<CYb>-0.258244</CYb><Cellb>-0.039250</Cellb><Cenb>0.100826</Cenb>"), yaw));
  p.w.step(1);
  const double beta = std::atan2(-std::sin(-yaw), std::cos(yaw));  // v·y_b / v·x_b
  ASSERT_NEAR(beta, 0.1, 1e-12);
  const double span = std::sqrt(kArea * kAR);
  // Axes in the world: body x (cos ψ, sin ψ, 0), y_b (right) = (sin ψ, −cos ψ, 0), z_b down.
  const Vector3d x_b(std::cos(yaw), std::sin(yaw), 0), y_b(std::sin(yaw), -std::cos(yaw), 0),
      z_b(0, 0, -1);
  // The speed in the body's x-z plane and the side force along y_b.
  const double v_ld = V * std::cos(yaw), q_ld = 0.5 * kRho * v_ld * v_ld;
  EXPECT_NEAR(p.wrench.force.Dot(y_b), q_ld * kArea * CYb * beta, 1e-9);
  const Vector3d torque = p.wrench.torque;
  EXPECT_NEAR(torque.Dot(x_b), q_ld * kArea * span * Cellb * beta, 1e-9);
  EXPECT_NEAR(torque.Dot(z_b), q_ld * kArea * span * Cenb * beta, 1e-9);
  (void)q;
}

TEST(AdvancedLiftDrag, ControlSurfacesActPerDegreeOfDeflection) {
  const std::string surface = R"(
      <link name="elevator"><pose>-0.5 0 0 0 0 0</pose>
        <inertial><mass>0.1</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial>
      </link>
      <joint name="servo_2" type="revolute"><parent>base_link</parent><child>elevator</child>
        <axis><xyz>0 1 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
      <plugin filename="gz-sim-joint-position-controller-system"
        name="gz::sim::systems::JointPositionController"><joint_name>servo_2</joint_name>
        <use_velocity_commands>true</use_velocity_commands><initial_position>0.1</initial_position>
      </plugin>)";
  Probe p(body_world(0, "-15 0 0", surface + ald(R"(<num_ctrl_surfaces>1</num_ctrl_surfaces>
      <control_surface><name>servo_2</name><direction>-1</direction><CD_ctrl>0.000274</CD_ctrl>
        <CY_ctrl>0</CY_ctrl><CL_ctrl>0.010696</CL_ctrl><Cell_ctrl>0.0</Cell_ctrl>
        <Cem_ctrl>-0.025798</Cem_ctrl><Cen_ctrl>0.0</Cen_ctrl></control_surface>)")));
  double deflection = 0;
  const auto joint = p.w.find("w::plane::servo_2");
  p.on_step = [&](ecs::Registry& r) {
    if (const auto* j = r.try_get<c::JointPosition>(joint); j && !j->data.empty()) {
      deflection = j->data[0];
    }
  };
  p.w.step(5);
  ASSERT_NEAR(deflection, 0.1, 1e-3);
  const double V = 15, q = 0.5 * kRho * V * V;
  const double deg = deflection * 180 / M_PI * -1;  // direction −1
  const double cl = cl_of(0) + 0.010696 * deg;
  // The body has barely moved in 5 ms (10 t): compare within that.
  EXPECT_NEAR(p.wrench.force.Z(), q * kArea * cl, 2e-3);
  // Pitching moment along body y (right): Cem_ctrl·δ·q·S·c.
  EXPECT_NEAR(p.wrench.torque.Dot(Vector3d(0, -1, 0)), q * kArea * kMac * -0.025798 * deg, 2e-3);
}

TEST(AdvancedLiftDrag, RollRateIsDampedByCellp) {
  // Rolling right at p = 1 rad/s (FLU ω_x = 1): rolling moment Cellp·(p·b/2)·½ρV·S·b.
  Probe p(body_world(0, "-15 0 0", ald("<Cellp>-0.487407</Cellp>")));
  p.w.r().set(p.w.find("w::plane"), c::AngularVelocityCmd{{1, 0, 0}});
  p.w.step(2);
  const double V = 15, span = std::sqrt(kArea * kAR);
  const double expected = -0.487407 * (1 * span / 2) * 0.5 * kRho * V * kArea * span;
  EXPECT_NEAR(p.wrench.torque.X(), expected, 1e-3 * std::abs(expected));
}

TEST(AdvancedLiftDrag, RefusedParameters) {
  using testing::load_error;
  EXPECT_THAT(load_error(body_world(0, "0 0 0", ald("<num_ctrl_surfaces>2</num_ctrl_surfaces>"))),
              ::testing::HasSubstr("num_ctrl_surfaces"));
  EXPECT_THAT(load_error(body_world(0, "0 0 0", ald("<CLaa>1</CLaa>"))),
              ::testing::HasSubstr("CLaa"));
  EXPECT_THAT(load_error(body_world(0, "0 0 0", ald(R"(<num_ctrl_surfaces>1</num_ctrl_surfaces>
      <control_surface><name>nope</name><direction>1</direction><CD_ctrl>0</CD_ctrl>
      <CY_ctrl>0</CY_ctrl><CL_ctrl>0</CL_ctrl><Cell_ctrl>0</Cell_ctrl><Cem_ctrl>0</Cem_ctrl>
      <Cen_ctrl>0</Cen_ctrl></control_surface>)"))),
              ::testing::HasSubstr("nope"));
}

}  // namespace
}  // namespace kestrel::systems
