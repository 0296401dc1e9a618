// LiftDrag: a wing held in a uniform wind at angles of attack through and past stall gives
// L = ½ρV²S·CL(α) and D = ½ρV²S·CD(α) with the piecewise-linear coefficients its parameters
// give; sweep, the control surface joint, the centre of pressure, reversed flow, refused input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "kestrel/components/physics.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

// PX4's rc_cessna wing (../shared/models/px4/models/rc_cessna), area 0.6 m².
constexpr double kA0 = 0.05984281113, kCla = 4.752798721, kCda = 0.6417112299,
                 kAlphaStall = 0.3391428111, kClaStall = -3.85, kCdaStall = -0.9233984055,
                 kArea = 0.6, kRho = 1.2041;

std::string lift_drag(const std::string& extra) {
  return R"(<plugin filename="gz-sim-lift-drag-system" name="gz::sim::systems::LiftDrag">
      <a0>0.05984281113</a0><cla>4.752798721</cla><cda>0.6417112299</cda>
      <alpha_stall>0.3391428111</alpha_stall><cla_stall>-3.85</cla_stall>
      <cda_stall>-0.9233984055</cda_stall><area>0.6</area><air_density>1.2041</air_density>
      <forward>1 0 0</forward><upward>0 0 1</upward><link_name>wing</link_name>)" +
         extra + "</plugin>";
}

// A heavy wing (it barely moves in the first steps) pitched nose-up by `pitch`, in zero
// gravity, in a wind `wind` (world frame); `model_extra` inside the model.
std::string wing_world(double pitch, const std::string& wind, const std::string& model_extra) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity><wind><linear_velocity>)" +
         wind + R"(</linear_velocity></wind>
    <model name="plane"><pose>0 0 10 0 )" +
         std::to_string(-pitch) + R"( 0</pose>
      <link name="wing">
        <inertial><mass>10000</mass><inertia><ixx>1000</ixx><iyy>1000</iyy><izz>1000</izz></inertia></inertial>
      </link>)" +
         model_extra + "</model></world></sdf>";
}

// The wing's wrench each step.
struct Probe : testing::WrenchProbe {
  explicit Probe(const std::string& sdf) : WrenchProbe(sdf, "w::plane::wing") {}
};

// The coefficients as README.md states them: slope up to ±alpha_stall, the stall slope beyond.
double coefficient(double alpha, double a, double a_stall) {
  if (alpha > kAlphaStall) return a * kAlphaStall + a_stall * (alpha - kAlphaStall);
  if (alpha < -kAlphaStall) return -a * kAlphaStall + a_stall * (alpha + kAlphaStall);
  return a * alpha;
}
double cl_of(double alpha) {
  const double cl = coefficient(alpha, kCla, kClaStall);
  if (alpha > kAlphaStall) return std::max(0.0, cl);
  if (alpha < -kAlphaStall) return std::min(0.0, cl);
  return cl;
}
double cd_of(double alpha) { return std::abs(coefficient(alpha, kCda, kCdaStall)); }

TEST(LiftDrag, LiftAndDragThroughAndPastStall) {
  const double V = 12.0, q = 0.5 * kRho * V * V;
  // Geometric pitch; α = a0 + pitch: below stall, at its edge, past it, far past (CL clamped 0).
  for (double pitch : {-0.6, -0.45, -0.2, 0.0, 0.1, 0.25, 0.3, 0.45, 0.8, 1.2}) {
    SCOPED_TRACE(pitch);
    // The wing flies +x: the air moves −x.
    Probe probe(wing_world(pitch, "-12 0 0", lift_drag("")));
    probe.w.step(1);
    const double alpha = kA0 + pitch;
    const Vector3d f = probe.wrench.force;
    // Lift is normal to the flow (+z), drag along it (−x: the way the air goes).
    EXPECT_NEAR(f.Z(), q * kArea * cl_of(alpha), 1e-9 * q);
    EXPECT_NEAR(f.X(), -q * kArea * cd_of(alpha), 1e-9 * q);
    EXPECT_NEAR(f.Y(), 0, 1e-9);
    EXPECT_NEAR(probe.wrench.torque.Length(), 0, 1e-9);  // cp at the origin, cma 0
  }
}

TEST(LiftDrag, WingMovingThroughStillAirFeelsTheSameForce) {
  // gz-sim's lift_drag_system test moves its model instead: the force depends only on the
  // velocity relative to the air.
  Probe a(wing_world(0.1, "0 0 0", lift_drag("")));
  // LinearVelocityCmd is in the model's frame (pitched 0.1 rad): 12 m/s along world x.
  a.w.r().set(a.w.find("w::plane"),
              c::LinearVelocityCmd{
                  ignition::math::Quaterniond(0, -0.1, 0).RotateVectorReverse(Vector3d(12, 0, 0))});
  Probe b(wing_world(0.1, "-12 0 0", lift_drag("")));
  a.w.step(2);
  b.w.step(2);
  EXPECT_GT(a.wrench.force.Z(), 1.0);
  EXPECT_NEAR(a.wrench.force.Z(), b.wrench.force.Z(), 1e-3 * b.wrench.force.Z());
  EXPECT_NEAR(a.wrench.force.X(), b.wrench.force.X(), 1e-3 * std::abs(b.wrench.force.X()));
}

TEST(LiftDrag, SweepScalesByCosSquaredAndFlowInReverseMakesNoForce) {
  // Air at 30° to the chord in the wing's plane: the coefficients scale by cos²(sweep), the
  // dynamic pressure uses the speed in the lift-drag plane.
  const double V = 10, sweep = M_PI / 6;
  const std::string wind =
      std::to_string(-V * std::cos(sweep)) + " " + std::to_string(-V * std::sin(sweep)) + " 0";
  Probe p(wing_world(0.0, wind, lift_drag("")));
  p.w.step(1);
  const double v_ld = V * std::cos(sweep), q = 0.5 * kRho * v_ld * v_ld;
  const double cos2 = std::cos(sweep) * std::cos(sweep);
  EXPECT_NEAR(p.wrench.force.Z(), q * kArea * kCla * kA0 * cos2, 1e-6);
  EXPECT_NEAR(p.wrench.force.X(), -q * kArea * kCda * kA0 * cos2, 1e-6);

  Probe pb(wing_world(0.1, "12 0 0", lift_drag("")));
  pb.w.step(1);
  EXPECT_EQ(pb.wrench.force, Vector3d::Zero);
  Probe pr(wing_world(0.1, "12 0 0", lift_drag("<reversible>true</reversible>")));
  pr.w.step(1);
  EXPECT_GT(pr.wrench.force.Length(), 1.0);
}

TEST(LiftDrag, ControlSurfaceJointAddsLiftAndMomentCentreOfPressureArm) {
  // A flap on a revolute joint held at its commanded angle (velocity mode reaches it in a step).
  const std::string flap = R"(
      <link name="flap"><pose>-0.3 0 0 0 0 0</pose>
        <inertial><mass>0.1</mass><inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz></inertia></inertial>
      </link>
      <joint name="flap_joint" type="revolute"><parent>wing</parent><child>flap</child>
        <axis><xyz>0 1 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
      <plugin filename="gz-sim-joint-position-controller-system"
        name="gz::sim::systems::JointPositionController"><joint_name>flap_joint</joint_name>
        <use_velocity_commands>true</use_velocity_commands><initial_position>0.2</initial_position>
      </plugin>)";
  Probe p(wing_world(0.0, "-12 0 0",
                     flap + lift_drag("<control_joint_name>flap_joint</control_joint_name>"
                                      "<control_joint_rad_to_cl>-0.3</control_joint_rad_to_cl>"
                                      "<cma>0.2</cma><cm_delta>-0.5</cm_delta>"
                                      "<cp>0.1 0.5 0</cp>")));
  double deflection = 0;
  const auto joint = p.w.find("w::plane::flap_joint");
  p.on_step = [&](ecs::Registry& r) {
    const auto* q = r.try_get<c::JointPosition>(joint);
    if (q && !q->data.empty()) deflection = q->data[0];
  };
  p.w.step(5);
  ASSERT_NEAR(deflection, 0.2, 1e-3);
  const double V = 12, q = 0.5 * kRho * V * V;
  const double cl = kCla * kA0 - 0.3 * deflection;
  const double cm = 0.2 * kA0 - 0.5 * deflection;
  // The wing has barely moved: compare to within its motion (mass 10 t, 5 ms).
  const Vector3d f = p.wrench.force;
  EXPECT_NEAR(f.Z(), q * kArea * cl, 1e-3);
  EXPECT_NEAR(f.X(), -q * kArea * kCda * kA0, 1e-3);
  // Moment along forward × upward (−y), plus the centre of pressure's arm.
  const Vector3d moment(0, -q * kArea * cm, 0);
  const Vector3d expected = moment + Vector3d(0.1, 0.5, 0).Cross(f);
  EXPECT_NEAR((p.wrench.torque - expected).Length(), 0, 1e-3);
}

TEST(LiftDrag, RefusedParameters) {
  using testing::load_error;
  std::string bad_link = lift_drag("");
  bad_link.replace(bad_link.find("<link_name>wing"), 15, "<link_name>nope");
  EXPECT_THAT(load_error(wing_world(0, "0 0 0", bad_link)), ::testing::HasSubstr("nope"));
  EXPECT_THAT(load_error(wing_world(0, "0 0 0", lift_drag("<claa>1</claa>"))),
              ::testing::HasSubstr("claa"));
  EXPECT_THAT(load_error(wing_world(0, "0 0 0", lift_drag("<forwardd>1 0 0</forwardd>"))),
              ::testing::HasSubstr("forwardd"));
  EXPECT_THAT(load_error(wing_world(0, "0 0 0",
                                    lift_drag("<control_joint_name>none</control_joint_name>"))),
              ::testing::HasSubstr("none"));
}

}  // namespace
}  // namespace kestrel::systems
