// LighterThanAirDynamics (gz-sim): the hull of gz-sim's own test world in zero gravity. Flying
// straight along its axis it feels only the axial drag −½ρu²·C_a; sideways, the viscous
// cross-flow force −½ρw²·C_fv and moment −½ρw²·C_mv and (Gazebo's angle of attack being in the
// x-z plane) the axial drag of that speed; yawing alone, the flow at eps_v ahead and the added
// mass's Coriolis terms. gz-sim's integration tests ported: pushed along its axis after a small
// push across, the hull's yaw (and, pushed across in z, its pitch) and their rates grow beyond
// those of the same hull without the system, and it travels less far.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/system.h"
#include "testing/wrench_probe.h"

namespace kestrel::systems {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::LoadedWorld;

constexpr double kRho = 1.2754, kFi = -0.06425096870274437, kFv = 0.07237374316691345,
                 kMi = 0.08506449448628849, kMv = -0.0941254292661463, kCa = 0.1, kEps = 2.4389047;

// gz-sim's lighter-than-air test world, with its numbers: "hull" with the system
// and the fluid added mass of a 3 m × 0.75 m ellipsoid-like hull, "hull2" without either.
std::string hull_link(const std::string& name, bool added) {
  return R"(<link name=")" + name + R"("><inertial><mass>5.815677050417254</mass>
          <inertia><ixx>0.0069861272</ixx><iyy>0.1292433532</iyy><izz>0.1292433532</izz></inertia>)" +
         (added ? R"(<fluid_added_mass><xx>0.0256621271421697</xx><yy>0.538639694339695</yy>
            <yr>0.189291512412098</yr><zz>0.538639694339695</zz><zq>-0.189291512412098</zq>
            <pp>0.000160094457776136</pp><qq>2.02957381640185</qq><rr>2.02957381640185</rr>
          </fluid_added_mass>)"
                : "") +
         R"(</inertial>
        <collision name="c"><pose>0 0 0 0 1.5707963267948966 0</pose>
          <geometry><cylinder><length>3</length><radius>0.75</radius></cylinder></geometry></collision>
      </link>)";
}
const std::string kPlugin = R"(<plugin filename="gz-sim-lighter_than_air_dynamics-system"
        name="gz::sim::systems::LighterThanAirDynamics">
        <link_name>hull_link</link_name><air_density>1.2754</air_density>
        <force_inviscid_coeff>-0.06425096870274437</force_inviscid_coeff>
        <force_viscous_coeff>0.07237374316691345</force_viscous_coeff>
        <moment_inviscid_coeff>0.08506449448628849</moment_inviscid_coeff>
        <moment_viscous_coeff>-0.0941254292661463</moment_viscous_coeff>
        <axial_drag_coeff>0.1</axial_drag_coeff><eps_v>2.4389047</eps_v>)";

std::string hull_world(const std::string& plugin_extra = "", bool added = true) {
  return R"(<?xml version="1.0"?><sdf version="1.6"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="hull"><pose>0 0 30 0 0 0</pose>)" +
         hull_link("hull_link", added) + kPlugin + plugin_extra + R"(</plugin></model>
    <model name="hull2"><pose>0 5 30 0 0 0</pose>)" +
         hull_link("hull2_link", false) + "</model></world></sdf>";
}

// Writes the hull link's velocity components before every other PreUpdate, so that the system
// sees exactly (v, ω) (the hull is not turned: world and link axes coincide).
class VelocitySetter final : public System, public ISystemPreUpdate {
 public:
  VelocitySetter(ecs::Entity link, Vector3d v, Vector3d w) : link_(link), v_(v), w_(w) {}
  int priority() const override { return std::numeric_limits<int>::min(); }
  void pre_update(const UpdateInfo&, ecs::Registry& r) override {
    r.get<c::WorldLinearVelocity>(link_).value = v_;
    r.get<c::WorldAngularVelocity>(link_).value = w_;
  }

 private:
  ecs::Entity link_;
  Vector3d v_, w_;
};

// The wrench the system adds for the hull moving at (v, ω).
c::ExternalWorldWrenchCmd wrench_at(const Vector3d& v, const Vector3d& w) {
  LoadedWorld world(hull_world(), false);
  const auto link = world.find("w::hull::hull_link");
  c::ExternalWorldWrenchCmd wrench;
  world.runner->add_system(std::make_unique<VelocitySetter>(link, v, w), world.runner->world(),
                           Element::empty("plugin"), "setter", "test");
  world.runner->add_system(
      std::make_unique<testing::PreUpdateProbe>([&](const UpdateInfo&, ecs::Registry& r) {
        wrench = r.get<c::ExternalWorldWrenchCmd>(link);
      }),
      world.runner->world(), Element::empty("plugin"), "probe", "test");
  world.runner->configure();
  world.step();
  return wrench;
}

TEST(LighterThanAirDynamics, AxialFlightFeelsTheAxialDragOnly) {
  const double u = 4;
  const auto wr = wrench_at(Vector3d(u, 0, 0), Vector3d::Zero);
  EXPECT_NEAR(wr.force.X(), -0.5 * kRho * u * u * kCa, 1e-12);
  EXPECT_NEAR(wr.force.Y(), 0, 1e-12);
  EXPECT_NEAR(wr.force.Z(), 0, 1e-12);
  EXPECT_NEAR(wr.torque.Length(), 0, 1e-12);
}

TEST(LighterThanAirDynamics, CrossFlowGivesTheViscousForceAndMoment) {
  const double w = 3;
  const double q = 0.5 * kRho * w * w;
  const auto wr = wrench_at(Vector3d(0, w, 0), Vector3d::Zero);
  // γ = 90°: sin 2γ = 0, sin² γ = 1; the cross-flow normal is +y.
  EXPECT_NEAR(wr.force.Y(), -q * kFv, 1e-9);
  EXPECT_NEAR(wr.torque.Z(), -q * kMv, 1e-9);
  EXPECT_NEAR(wr.force.X(), -q * kCa, 1e-9);  // atan2(0, 0) = 0: Gazebo's axial drag of w
  EXPECT_NEAR(wr.force.Z(), 0, 1e-12);
  EXPECT_NEAR(wr.torque.X(), 0, 1e-12);
  EXPECT_NEAR(wr.torque.Y(), 0, 1e-12);
  // At 45° in the x-y plane the inviscid (Munk) terms take part: sin 2γ = 1, sin² γ = ½.
  const double s = 2, q45 = 0.5 * kRho * 2 * s * s;
  const auto wr45 = wrench_at(Vector3d(s, s, 0), Vector3d::Zero);
  const double ny = 1.0;
  EXPECT_NEAR(wr45.force.Y(), q45 * (-kFi + 0.5 * kFv) * -ny, 1e-9);
  EXPECT_NEAR(wr45.torque.Z(), q45 * (-kMi + 0.5 * kMv) * -ny, 1e-9);
  EXPECT_NEAR(wr45.force.X(), -q45 * kCa, 1e-9);
}

TEST(LighterThanAirDynamics, YawingTheHullSeesTheFlowAheadAndTheAddedMassTerms) {
  const double rate = 0.5;
  const auto wr = wrench_at(Vector3d::Zero, Vector3d(0, 0, rate));
  // The flow at eps_v ahead: ω × (−ε, 0, 0) = (0, −ε·r, 0); γ = 90°.
  const double q = 0.5 * kRho * kEps * rate * kEps * rate;
  EXPECT_NEAR(wr.force.Y(), -q * kFv * -1, 1e-9);
  // Moment: the viscous one (−n_y = +1) plus −ω × M22·ω = 0 for ω along a principal axis.
  EXPECT_NEAR(wr.torque.Z(), q * kMv, 1e-9);
  // Force: −ω × (M12·ω): M12 has yr = 0.1893 (y row, r column): M12·ω = (0, 0.1893·r, 0),
  // −ω × that = (0.1893·r², 0, 0).
  EXPECT_NEAR(wr.force.X(), 0.189291512412098 * rate * rate, 1e-9);
}

// gz-sim's UnstableMunkMomentInYaw and UnstableMunkMomentInPitch: 100 N along each hull's axis
// every step after a push across at the start, 2000 steps.
struct End {
  ignition::math::Pose3d pose;
  Vector3d body_rate;
};
std::pair<End, End> pushed(const Vector3d& first_push) {
  LoadedWorld w(hull_world(), false);
  const auto a = w.find("w::hull::hull_link"), b = w.find("w::hull2::hull2_link");
  bool first = true;
  w.runner->add_system(
      std::make_unique<testing::PreUpdateProbe>([&](const UpdateInfo&, ecs::Registry& r) {
        for (auto link : {a, b}) {
          if (!r.has<c::ExternalWorldWrenchCmd>(link)) r.add<c::ExternalWorldWrenchCmd>(link);
          const auto& q = r.get<c::WorldPose>(link).value.Rot();
          Vector3d f(100, 0, 0);
          if (first) f += first_push;
          r.get<c::ExternalWorldWrenchCmd>(link).force += q.RotateVector(f);
        }
        first = false;
      }),
      w.runner->world(), Element::empty("plugin"), "push", "test");
  w.runner->configure();
  w.step(2000);
  auto end = [&](ecs::Entity l) {
    const auto& X = w.r().get<c::WorldPose>(l).value;
    return End{X, X.Rot().RotateVectorReverse(w.r().get<c::WorldAngularVelocity>(l).value)};
  };
  return {end(a), end(b)};
}

TEST(LighterThanAirDynamics, GazebosMunkMomentTestsYawAndPitchGrow) {
  {
    const auto [hull, bare] = pushed(Vector3d(0, 10, 0));
    EXPECT_LE(hull.pose.Pos().X(), bare.pose.Pos().X());
    EXPECT_GT(std::abs(hull.pose.Rot().Euler().Z()), std::abs(bare.pose.Rot().Euler().Z()));
    EXPECT_GT(std::abs(hull.body_rate.Z()), std::abs(bare.body_rate.Z()));
    EXPECT_GT(std::abs(hull.body_rate.Z()), 1e-3);
  }
  {
    const auto [hull, bare] = pushed(Vector3d(0, 0, 100));
    EXPECT_LE(hull.pose.Pos().X(), bare.pose.Pos().X());
    EXPECT_GT(std::abs(hull.pose.Rot().Euler().Y()), std::abs(bare.pose.Rot().Euler().Y()));
    EXPECT_GT(std::abs(hull.body_rate.Y()), std::abs(bare.body_rate.Y()));
    EXPECT_GT(std::abs(hull.body_rate.Y()), 1e-3);
  }
}

TEST(LighterThanAirDynamics, RefusesBadParametersAndAHullWithoutAddedMass) {
  using ::testing::HasSubstr;
  EXPECT_THAT(testing::load_error(hull_world("", false)), HasSubstr("no <fluid_added_mass>"));
  EXPECT_THAT(testing::load_error(hull_world("<drag>1</drag>")), HasSubstr("drag"));
  std::string no_eps = hull_world();
  no_eps.replace(no_eps.find("<eps_v>"), std::string("<eps_v>2.4389047</eps_v>").size(), "");
  EXPECT_THAT(testing::load_error(no_eps), HasSubstr("eps_v"));
  std::string bad_rho = hull_world();
  bad_rho.replace(bad_rho.find("1.2754"), 6, "-1");
  EXPECT_THAT(testing::load_error(bad_rho), HasSubstr("air_density"));
}

}  // namespace
}  // namespace kestrel::systems
