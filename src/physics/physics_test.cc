// Analytic checks of the Physics system (MuJoCo backend) on hand-built worlds.

#include "kestrel/physics/physics.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "kestrel/components/fluid.h"
#include "kestrel/components/physics_islands.h"
#include "physics/mujoco/island.h"
#include "physics/pose_math.h"
#include "physics/test_worlds.h"
#include "sensors/common/test_util.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using testing::link_of;
using testing::TestWorld;

constexpr double kG = 9.8;

TEST(Physics, FreeFallMatchesSemiImplicitEulerAndAnalytic) {
  TestWorld w;
  const auto box = w.box("box", {0, 0, 10}, {0.1, 0.1, 0.1}, 2.0);
  w.start();
  const auto link = link_of(w.r(), box);
  const int n = 1000;
  const double dt = 1e-3;
  w.step(n);
  const double t = n * dt;
  const double z = w.r().get<c::WorldPose>(link).value.Pos().Z();
  // Semi-implicit Euler: v_k = -g k dt, z_N = z0 - g dt² N(N+1)/2.
  EXPECT_NEAR(z, 10 - kG * dt * dt * n * (n + 1) / 2.0, 1e-9);
  // Analytic ½gt², to the integrator's accuracy (first order: ½ g dt t).
  EXPECT_NEAR(z, 10 - 0.5 * kG * t * t, 0.5 * kG * dt * t + 1e-9);
  EXPECT_NEAR(w.r().get<c::WorldLinearVelocity>(link).value.Z(), -kG * t, 1e-9);
  // Kinematic acceleration in free fall is g (world and body frames coincide here).
  EXPECT_NEAR(w.r().get<c::WorldLinearAcceleration>(link).value.Z(), -kG, 1e-6);
  EXPECT_NEAR(w.r().get<c::LinearAcceleration>(link).value.Z(), -kG, 1e-6);
  // The model frame follows its link.
  EXPECT_NEAR(w.r().get<c::WorldPose>(box).value.Pos().Z(), z, 1e-12);
  EXPECT_TRUE(w.r().get<c::Contacts>(w.r().child_by_name(link, "collision")).points.empty());
}

// A compound pendulum on a revolute joint: T = 2π √((I_c + m L²) / (m g L)).
TEST(Physics, PendulumSmallAnglePeriod) {
  TestWorld w;
  const double L = 0.5, m = 1.0, Ic = 1e-3, theta0 = 0.05;
  const auto model = w.model("pendulum", Pose3d::Zero);
  const auto bob = w.link(model, "bob", Pose3d(0, 0, -L, 0, 0, 0), m, {Ic, Ic, Ic});
  c::JointAxisData axis;
  axis.xyz = {0, 1, 0};
  const auto joint =
      w.joint(model, "hinge", c::JointType::kRevolute, ecs::kNullEntity, bob, Pose3d::Zero, axis);
  w.start();
  w.r().add<c::JointPositionReset>(joint, std::vector<double>{theta0});
  const double dt = 1e-3;
  std::vector<double> crossings;
  double prev = theta0;
  for (int k = 1; k <= 6000; ++k) {
    w.step();
    const double q = w.r().get<c::JointPosition>(joint).data.at(0);
    if (prev > 0 && q <= 0) crossings.push_back((k - 1 + prev / (prev - q)) * dt);
    prev = q;
  }
  EXPECT_FALSE(w.r().has<c::JointPositionReset>(joint)) << "one-shot command must be removed";
  ASSERT_GE(crossings.size(), 3u);
  const double period = (crossings.back() - crossings.front()) / (crossings.size() - 1);
  const double expected = 2 * M_PI * std::sqrt((Ic + m * L * L) / (m * kG * L));
  EXPECT_NEAR(period, expected, 2e-3 * expected);
}

TEST(Physics, BoxRestsOnGroundWithContactForceMg) {
  TestWorld w;
  w.ground();
  const double m = 1.5;
  const auto box = w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, m);
  w.start();
  const auto link = link_of(w.r(), box);
  const auto col = w.r().child_by_name(link, "collision");
  w.step(2000);
  EXPECT_NEAR(w.r().get<c::WorldPose>(link).value.Pos().Z(), 0.1, 1e-3);
  const auto& pts = w.r().get<c::Contacts>(col).points;
  ASSERT_FALSE(pts.empty());
  Vector3d total;
  for (const auto& p : pts) {
    total += p.force;
    EXPECT_NEAR(p.normal.Z(), 1.0, 1e-9) << "normal points from the ground into the box";
    EXPECT_GE(p.depth, -1e-9);
    EXPECT_NEAR(p.position.Z(), 0.0, 2e-3);
  }
  EXPECT_NEAR(total.Z(), m * kG, 0.01 * m * kG);
  EXPECT_NEAR(total.X(), 0, 1e-6);
  // The ground sees the reaction.
  const auto ground_col = w.r().child_by_name(
      w.r().child_by_name(w.r().find_scoped("test::ground"), "link"), "collision");
  Vector3d reaction;
  for (const auto& p : w.r().get<c::Contacts>(ground_col).points) reaction += p.force;
  EXPECT_NEAR(reaction.Z(), -total.Z(), 1e-9);
  EXPECT_NEAR(w.r().get<c::WorldLinearAcceleration>(link).value.Length(), 0, 0.05);
}

// physics::testing::millimetre_cube_ply() with <scale> 0.001: it rests on the ground at its
// half-height.
TEST(Physics, ConvertedMeshCollidesAtItsScaledSize) {
  TestWorld w;
  w.ground();
  const auto model = w.model("cube", Pose3d(0, 0, 0.5, 0, 0, 0));
  const double m = 1.0, I = m * 0.2 * 0.2 / 6;
  const auto link = w.link(model, "link", Pose3d::Zero, m, {I, I, I});
  c::MeshShape mesh;
  mesh.uri = "model://cube/cube_mm.ply";
  mesh.path = testing::millimetre_cube_ply();
  mesh.scale = {0.001, 0.001, 0.001};
  w.collision(link, "collision", c::Geometry{mesh});
  w.start();
  w.step(2000);
  EXPECT_NEAR(w.r().get<c::WorldPose>(link).value.Pos().Z(), 0.1, 1e-3);
  Vector3d total;
  for (const auto& p : w.r().get<c::Contacts>(w.r().child_by_name(link, "collision")).points) {
    total += p.force;
  }
  EXPECT_NEAR(total.Z(), m * kG, 0.01 * m * kG);
}

// A box on a slope (gravity tilted by θ about y) slides only when tan θ > μ.
// `ground_mu` (if > 0) gives the ground its own μ.
double slide_distance(double theta, double mu, double seconds, double ground_mu = 0) {
  TestWorld w(Duration{1'000'000}, {kG * std::sin(theta), 0, -kG * std::cos(theta)});
  c::Surface s;
  s.mu = s.mu2 = mu;
  c::Surface g = s;
  if (ground_mu > 0) g.mu = g.mu2 = ground_mu;
  w.ground(g);
  const auto box = w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, 1.0, s);
  w.start();
  w.step(static_cast<int>(seconds * 1000));
  return w.r().get<c::WorldPose>(link_of(w.r(), box)).value.Pos().X();
}

TEST(Physics, InclineSlidesOnlyWhenTanThetaExceedsMu) {
  const double mu = 0.5;
  EXPECT_LT(std::abs(slide_distance(std::atan(0.4), mu, 1.0)), 1e-3);
  const double theta = std::atan(0.6);
  const double d = slide_distance(theta, mu, 1.0);
  // Sliding from rest: x = ½ g (sin θ − μ cos θ) t².
  const double a = kG * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(d, 0.5 * a * 1.0, 0.05 * 0.5 * a);
}

// A contact's μ is the smaller of its two surfaces' (ODE's and DART's rule; MuJoCo's own is
// the larger): a μ 0.5 box on a μ 50 ground (gz-sim's ackermann_steering.sdf gives its ground
// <mu>50</mu>) slides on a slope of tan θ = 0.6 as on a μ 0.5 ground, and holds at 0.4.
TEST(Physics, ContactFrictionIsTheSmallerOfTheTwo) {
  const double theta = std::atan(0.6);
  EXPECT_EQ(slide_distance(theta, 0.5, 1.0, 50), slide_distance(theta, 0.5, 1.0));
  EXPECT_GT(slide_distance(theta, 0.5, 1.0, 50), 0.1);
  EXPECT_LT(std::abs(slide_distance(std::atan(0.4), 0.5, 1.0, 50)), 1e-3);
}

// Two surfaces of large μ: MuJoCo's pyramidal cone let a box with μ 20 on a μ 20 ground sink
// and fall through (μ 10: 2.5 cm deep); Kestrel then uses the elliptic cone: the box rests
// 0.1 m up (to MuJoCo's contact softness) and holds on a slope of tan θ = 0.9 (it would tip
// beyond 1).
TEST(Physics, LargeFrictionStillHoldsTheBodyUp) {
  for (const double mu : {10.0, 50.0}) {
    SCOPED_TRACE(mu);
    TestWorld w;
    c::Surface s;
    s.mu = s.mu2 = mu;
    w.ground(s);
    const auto box = w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, 1.0, s);
    w.start();
    w.step(1000);
    EXPECT_NEAR(w.r().get<c::WorldPose>(link_of(w.r(), box)).value.Pos().Z(), 0.1, 1e-3);
    EXPECT_LT(std::abs(slide_distance(std::atan(0.9), mu, 1.0)), 1e-3);
  }
}

TEST(Physics, UpwardForceMgHoldsABodyStill) {
  TestWorld w;
  const double m = 2.0;
  const auto box = w.box("box", {0, 0, 5}, {0.1, 0.1, 0.1}, m);
  w.start();
  const auto link = link_of(w.r(), box);
  auto& reg = w.r();
  reg.add<c::ExternalWorldWrenchCmd>(link);
  for (int k = 0; k < 1000; ++k) {
    // Two systems adding halves: commands accumulate within a step.
    reg.get<c::ExternalWorldWrenchCmd>(link).force += Vector3d(0, 0, m * kG / 2);
    reg.get<c::ExternalWorldWrenchCmd>(link).force += Vector3d(0, 0, m * kG / 2);
    w.step();
    ASSERT_EQ(reg.get<c::ExternalWorldWrenchCmd>(link).force, Vector3d::Zero)
        << "cleared after the step";
  }
  EXPECT_NEAR(reg.get<c::WorldPose>(link).value.Pos().Z(), 5.0, 1e-9);
  EXPECT_NEAR(reg.get<c::WorldLinearVelocity>(link).value.Length(), 0, 1e-9);
  // Without the force it falls again.
  w.step(10);
  EXPECT_LT(reg.get<c::WorldLinearVelocity>(link).value.Z(), -0.05);
}

TEST(Physics, TorqueGivesAngularAccelerationInverseInertiaTimesTorque) {
  TestWorld w(Duration{1'000'000}, {0, 0, 0});
  const auto model = w.model("body", Pose3d(0, 0, 1, 0, 0, 0));
  // Centre of mass off the link origin: a pure torque must still give α = I⁻¹ τ.
  const auto link =
      w.link(model, "link", Pose3d::Zero, 1.0, {0.1, 0.2, 0.3}, Pose3d(0.05, 0, 0, 0, 0, 0));
  w.start();
  auto& reg = w.r();
  const Vector3d tau(0.01, 0.02, 0.03);
  reg.add<c::ExternalWorldWrenchCmd>(link, Vector3d::Zero, tau);
  w.step();
  const Vector3d alpha = reg.get<c::AngularAcceleration>(link).value;
  EXPECT_NEAR(alpha.X(), 0.1, 1e-6);
  EXPECT_NEAR(alpha.Y(), 0.1, 1e-6);
  EXPECT_NEAR(alpha.Z(), 0.1, 1e-6);
  EXPECT_NEAR(reg.get<c::AngularVelocity>(link).value.X(), 0.1e-3, 1e-9);
  // A force through the link origin, off the CoM, also produces a torque about the CoM.
  TestWorld w2(Duration{1'000'000}, {0, 0, 0});
  const auto m2 = w2.model("body", Pose3d::Zero);
  const auto l2 =
      w2.link(m2, "link", Pose3d::Zero, 1.0, {0.1, 0.1, 0.1}, Pose3d(0.1, 0, 0, 0, 0, 0));
  w2.start();
  w2.r().add<c::ExternalWorldWrenchCmd>(l2, Vector3d(0, 1, 0), Vector3d::Zero);
  w2.step();
  // τ about the CoM = (origin − com) × F = (−0.1, 0, 0) × (0, 1, 0) = (0, 0, −0.1): α_z = −1.
  EXPECT_NEAR(w2.r().get<c::AngularAcceleration>(l2).value.Z(), -1.0, 1e-6);
}

// Wrenches become generalized forces along each body's chain (Kestrel's sparse J^T), except
// when some joint wants its transmitted wrench (MuJoCo's own xfrc_applied path, which
// mj_rnePostConstraint needs). Both paths must fly an articulated body the same way.
TEST(Physics, SparseWrenchesMatchMujocosOwnPath) {
  auto fly = [](bool mujoco_path) {
    TestWorld w;
    const Pose3d X_WM(0, 0, 2, 0.1, -0.2, 0.3), X_MA(0.2, 0, 0.05, 0, 0.3, 0);
    const auto model = w.model("craft", X_WM);
    const auto base = w.link(model, "base", Pose3d::Zero, 1.0, {0.02, 0.03, 0.04},
                             Pose3d(0.01, 0.02, 0, 0, 0, 0));
    const auto arm =
        w.link(model, "arm", X_MA, 0.1, {1e-3, 2e-3, 3e-3}, Pose3d(0.03, 0, 0, 0, 0, 0));
    c::JointAxisData axis;
    axis.xyz = {0, 1, 0};
    const auto joint =
        w.joint(model, "hinge", c::JointType::kRevolute, base, arm, compose(X_WM, X_MA), axis);
    w.start();
    auto& r = w.r();
    if (mujoco_path) r.add<c::JointTransmittedWrench>(joint);
    r.add<c::ExternalWorldWrenchCmd>(base);
    r.add<c::ExternalWorldWrenchCmd>(arm);
    r.add<c::JointForceCmd>(joint, std::vector<double>{0.0});
    for (int k = 0; k < 300; ++k) {
      r.get<c::ExternalWorldWrenchCmd>(base).force = Vector3d(0.3, -0.2, 9.0);
      r.get<c::ExternalWorldWrenchCmd>(base).torque = Vector3d(0.01, 0.0, -0.02);
      r.get<c::ExternalWorldWrenchCmd>(arm).force = Vector3d(0.0, 0.5, 2.5);
      r.get<c::ExternalWorldWrenchCmd>(arm).torque = Vector3d(0.0, 0.004, 0.01);
      r.get<c::JointForceCmd>(joint).data = {0.02};
      w.step();
      EXPECT_EQ(r.get<c::JointForce>(joint).data.at(0), 0.02)
          << "JointForce reports the joint command, not the wrenches' share";
    }
    return std::vector<Pose3d>{r.get<c::WorldPose>(base).value, r.get<c::WorldPose>(arm).value};
  };
  const auto sparse = fly(false);
  const auto dense = fly(true);
  for (std::size_t i = 0; i < sparse.size(); ++i) {
    EXPECT_NEAR((sparse[i].Pos() - dense[i].Pos()).Length(), 0, 1e-9) << "link " << i;
    EXPECT_NEAR(sparse[i].Rot().Dot(dense[i].Rot()), 1.0, 1e-12) << "link " << i;
  }
  EXPECT_GT((sparse[0].Pos() - Vector3d(0, 0, 2)).Length(), 0.02) << "the wrenches moved it";
}

// Physics islands (components::PhysicsIslands): each moving top-level model in its own MuJoCo
// model with the static world. Boxes that never meet fall, land and rest as in one model; the
// ground's contacts gather every island's; commands still fail loudly where nothing simulates
// them; reset returns exactly to the start.
TEST(Physics, IslandsSimulateSeparateModelsLikeOneWorld) {
  auto run = [](bool islands, std::vector<Pose3d>* poses, std::size_t* ground_points) {
    TestWorld w;
    const auto ground = w.ground();
    std::vector<ecs::Entity> links;
    for (int i = 0; i < 3; ++i) {
      links.push_back(link_of(w.r(), w.box("box" + std::to_string(i), {2.0 * i, 0, 0.3 + 0.1 * i},
                                           {0.2, 0.2, 0.2}, 1.0 + i)));
    }
    if (islands) w.r().add<c::PhysicsIslands>(w.world());
    w.start();
    w.r().add<c::ExternalWorldWrenchCmd>(links[1]);
    for (int k = 0; k < 600; ++k) {
      w.r().get<c::ExternalWorldWrenchCmd>(links[1]).force = Vector3d(30, 0, 0);  // slides
      w.step();
    }
    for (ecs::Entity l : links) poses->push_back(w.r().get<c::WorldPose>(l).value);
    const auto ground_collision = w.r().find_scoped("test::ground::link::collision");
    *ground_points = w.r().get<c::Contacts>(ground_collision).points.size();
    (void)ground;
  };
  std::vector<Pose3d> one, split;
  std::size_t one_points = 0, split_points = 0;
  run(false, &one, &one_points);
  run(true, &split, &split_points);
  ASSERT_EQ(one.size(), split.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_NEAR((one[i].Pos() - split[i].Pos()).Length(), 0, 1e-6) << "box " << i;
    EXPECT_NEAR(std::abs(one[i].Rot().Dot(split[i].Rot())), 1, 1e-9) << "box " << i;
  }
  EXPECT_GT(one[1].Pos().X(), 2.0 + 0.05) << "the pushed box slid";
  EXPECT_NEAR(one[0].Pos().Z(), 0.1, 0.01) << "resting on the ground";
  EXPECT_EQ(split_points, one_points) << "the ground sees every island's contacts";
  EXPECT_GE(one_points, 12u);  // at least 4 per box
}

// Two boxes in zero gravity fly at each other from different islands, collide and rebound: the
// islands merge before they touch and split once they are apart again, and every step matches
// one model for the whole world. A third box far away stays in an island of its own.
struct Collision {
  std::vector<Pose3d> a, b;                   // every step
  std::vector<std::pair<int, bool>> changes;  // step, merged (A and B in one island)
};
Collision collide(bool islands, int steps, int reset_at = -1) {
  TestWorld w(Duration{1'000'000}, {0, 0, 0});
  c::Surface bouncy;  // a stiff, lightly damped contact: they rebound
  bouncy.kp = 1e4;
  bouncy.kd = 1;
  const auto a = w.box("a", {-0.5, 0, 1}, {0.2, 0.2, 0.2}, 1.0, bouncy);
  const auto b = w.box("b", {0.5, 0.05, 1}, {0.2, 0.2, 0.2}, 2.0, bouncy);
  const auto far = w.box("far", {20, 0, 1}, {0.2, 0.2, 0.2}, 1.0);
  if (islands) w.r().add<c::PhysicsIslands>(w.world());
  w.start();
  const auto la = link_of(w.r(), a), lb = link_of(w.r(), b);
  auto kick = [&] {  // 1 m/s and -0.5 m/s after one step
    w.r().add<c::ExternalWorldWrenchCmd>(la, Vector3d(1000, 0, 0), Vector3d::Zero);
    w.r().add<c::ExternalWorldWrenchCmd>(lb, Vector3d(-1000, 0, 0), Vector3d(0, 0, 5));
  };
  kick();
  Collision out;
  bool merged = false;
  for (int k = 0; k < steps; ++k) {
    if (k == reset_at) {
      w.runner->reset_now();
      out = Collision{};
      merged = false;
      kick();
    }
    w.step();
    out.a.push_back(w.r().get<c::WorldPose>(la).value);
    out.b.push_back(w.r().get<c::WorldPose>(lb).value);
    if (islands) {
      const auto ia = w.r().get<c::PhysicsIsland>(a).first,
                 ib = w.r().get<c::PhysicsIsland>(b).first;
      EXPECT_NE(w.r().get<c::PhysicsIsland>(far).first, ia);
      if ((ia == ib) != merged) out.changes.emplace_back(static_cast<int>(out.a.size()), !merged);
      merged = ia == ib;
    }
  }
  return out;
}

TEST(Physics, IslandsMergeBeforeBodiesTouchAndCollideAsOneModel) {
  const Collision one = collide(false, 1500), split = collide(true, 1500);
  ASSERT_EQ(one.a.size(), split.a.size());
  double worst = 0;
  for (std::size_t k = 0; k < one.a.size(); ++k) {
    worst = std::max({worst, (one.a[k].Pos() - split.a[k].Pos()).Length(),
                      (one.b[k].Pos() - split.b[k].Pos()).Length()});
  }
  EXPECT_LT(worst, 1e-6) << "islands collide as one model";
  // They met and rebounded: A moves back after the impact, and never passed through B.
  EXPECT_LT(one.a.back().Pos().X(), one.a[600].Pos().X());
  for (std::size_t k = 0; k < one.a.size(); ++k) {
    ASSERT_LT(split.a[k].Pos().X(), split.b[k].Pos().X() - 0.15) << "step " << k;
  }
  // Split, merged before the impact (~step 530), split again once apart.
  ASSERT_EQ(split.changes.size(), 2u);
  EXPECT_TRUE(split.changes[0].second);
  EXPECT_LT(split.changes[0].first, 530);
  EXPECT_FALSE(split.changes[1].second);
  EXPECT_GT(split.changes[1].first, split.changes[0].first);
  // Deterministic: the same island changes at the same steps, the same poses bit for bit.
  const Collision again = collide(true, 1500);
  EXPECT_EQ(again.changes, split.changes);
  EXPECT_EQ(again.a.back(), split.a.back());
  EXPECT_EQ(again.b.back(), split.b.back());
}

TEST(Physics, IslandsResetExactlyWhileMergedOrSplit) {
  const Collision fresh = collide(true, 1500);
  ASSERT_EQ(fresh.changes.size(), 2u);
  // Reset while merged (mid-impact), and after the split: the rerun is the fresh run.
  for (int at : {fresh.changes[0].first + 20, fresh.changes[1].first + 20}) {
    const Collision rerun = collide(true, 1500 + at, at);
    ASSERT_EQ(rerun.a.size(), fresh.a.size()) << "reset at " << at;
    EXPECT_EQ(rerun.changes, fresh.changes) << "reset at " << at;
    EXPECT_EQ(rerun.a.back(), fresh.a.back()) << "reset at " << at;
    EXPECT_EQ(rerun.b.back(), fresh.b.back()) << "reset at " << at;
  }
}

// Above kAutoIslandModels moving models Physics uses islands on its own; PhysicsIslands
// {false} keeps one model (shown on a small world: 501 boxes in one model would allocate
// ~0.8 GB of MuJoCo 2.2's dense constraint buffers twice).
TEST(Physics, IslandsAreAutomaticForLargeWorldsUnlessTurnedOff) {
  for (bool off : {false, true}) {
    if (off) {
      TestWorld w;
      const auto a = w.box("a", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
      w.box("b", {3, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
      w.r().add<c::PhysicsIslands>(w.world(), c::PhysicsIslands{true});
      w.start();
      EXPECT_EQ(w.r().get<c::PhysicsIsland>(a).first, a) << "forced on: islands";
      TestWorld w2;
      w2.box("a", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
      w2.r().add<c::PhysicsIslands>(w2.world(), c::PhysicsIslands{false});
      w2.start();
      w2.step(2);
      EXPECT_EQ(w2.r().count<c::PhysicsIsland>(), 0u) << "forced off: one model";
      continue;
    }
    TestWorld w;
    w.ground();
    std::vector<ecs::Entity> boxes;
    for (int i = 0; i <= c::kAutoIslandModels; ++i) {
      boxes.push_back(w.box("b" + std::to_string(i), {0.5 * (i % 40), 0.5 * (i / 40), 0.1},
                            {0.1, 0.1, 0.1}, 1.0));
    }
    w.start();
    w.step(2);
    EXPECT_EQ(w.r().count<c::PhysicsIsland>(), boxes.size());
    // 0.4 m apart: each its own island
    EXPECT_EQ(w.r().get<c::PhysicsIsland>(boxes[7]).first, boxes[7]);
  }
}

// A rebuild (here: a spawn) after a model moved keeps its frame on its link.
TEST(Physics, RebuildAfterMotionKeepsTheModelFrame) {
  for (bool islands : {false, true}) {
    TestWorld w(Duration{1'000'000}, {0, 0, 0});
    const auto box = w.box("box", {0, 0, 1}, {0.2, 0.2, 0.2}, 1.0);
    if (islands) w.r().add<c::PhysicsIslands>(w.world());
    w.start();
    w.r().add<c::LinearVelocityCmd>(box, Vector3d(2, 0, 0));
    w.step(500);
    w.box("late", {5, 5, 1}, {0.2, 0.2, 0.2}, 1.0);
    w.step();
    const auto X = w.r().get<c::WorldPose>(box).value;
    EXPECT_NEAR(X.Pos().X(), 2 * 0.501, 1e-9) << islands;
    EXPECT_NEAR((X.Pos() - w.r().get<c::WorldPose>(link_of(w.r(), box)).value.Pos()).Length(), 0,
                1e-12)
        << islands;
  }
}

// Islands step on worker threads; the results are those of one thread, bit for bit: poses and
// the ground's contacts (which every island adds to) in the same order.
TEST(Physics, IslandResultsDoNotDependOnTheThreadCount) {
  struct Result {
    std::vector<Pose3d> poses;
    std::vector<c::ContactPoint> ground;
    std::vector<ecs::Entity> islands;
  };
  auto run = [](int threads) {
    TestWorld w;
    w.ground();
    std::vector<ecs::Entity> models, links;
    for (int i = 0; i < 12; ++i) {  // six pairs 0.1 m apart, pushed into each other
      models.push_back(w.box("b" + std::to_string(i),
                             {1.0 * (i / 2) + 0.3 * (i % 2), 0.02 * i, 0.2 + 0.05 * i},
                             {0.2, 0.2, 0.2}, 1.0 + 0.1 * i));
      links.push_back(link_of(w.r(), models.back()));
    }
    w.r().add<c::PhysicsIslands>(w.world());
    w.start(fmt::format("<plugin><threads>{}</threads></plugin>", threads));
    for (ecs::Entity l : links) w.r().add<c::ExternalWorldWrenchCmd>(l);
    for (int k = 0; k < 800; ++k) {
      for (std::size_t i = 0; i < links.size(); ++i) {
        w.r().get<c::ExternalWorldWrenchCmd>(links[i]).force = Vector3d(i % 2 ? -8 : 8, 0, 0);
      }
      w.step();
    }
    Result out;
    for (ecs::Entity l : links) out.poses.push_back(w.r().get<c::WorldPose>(l).value);
    out.ground = w.r().get<c::Contacts>(w.r().find_scoped("test::ground::link::collision")).points;
    for (ecs::Entity m : models) out.islands.push_back(w.r().get<c::PhysicsIsland>(m).first);
    return out;
  };
  const Result one = run(1);
  EXPECT_EQ(std::set<ecs::Entity>(one.islands.begin(), one.islands.end()).size(), 6u);
  EXPECT_GE(one.ground.size(), 48u);
  for (int threads : {2, 3}) {
    const Result r = run(threads);
    EXPECT_EQ(r.poses, one.poses) << threads << " threads";
    EXPECT_EQ(r.islands, one.islands) << threads << " threads";
    ASSERT_EQ(r.ground.size(), one.ground.size()) << threads << " threads";
    for (std::size_t i = 0; i < one.ground.size(); ++i) {
      EXPECT_EQ(r.ground[i].other, one.ground[i].other);
      EXPECT_EQ(r.ground[i].position, one.ground[i].position);
      EXPECT_EQ(r.ground[i].force, one.ground[i].force);
    }
  }
  TestWorld bad;
  bad.box("b", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  EXPECT_THAT([&] { bad.start("<plugin><threads>0</threads></plugin>"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr(
                  "Physics: <threads> must be a whole number from 1 to 256, found '0'")));
}

// Contact buffers are sized from the contacts that can occur at the build's state (12 boxes
// apart, 0.3 m above the ground: none, room for 4) and doubled when a step fills them (they
// land: 4 each, then pushed into one row, on each other too): no error, and the same poses as
// an engine with room from the start.
TEST(Physics, ContactBuffersGrowOnDemandAndCarryTheState) {
  auto run = [](int room, std::size_t* contacts) {
    TestWorld w;
    const auto ground = w.ground();
    std::vector<ecs::Entity> links;
    for (int i = 0; i < 12; ++i) {
      links.push_back(link_of(
          w.r(), w.box("b" + std::to_string(i), {0.4 * i, 0.01 * i, 0.4}, {0.2, 0.2, 0.2}, 1.0)));
    }
    auto engine = make_mujoco_engine_with_room(room);
    engine->build(w.r(), w.world());
    for (ecs::Entity l : links) w.r().add<c::ExternalWorldWrenchCmd>(l);
    for (int k = 0; k < 1500; ++k) {
      for (std::size_t i = 0; i < links.size(); ++i) {
        w.r().get<c::ExternalWorldWrenchCmd>(links[i]).force = Vector3d(i < 6 ? 15 : -15, 0, 0);
      }
      engine->step(Duration{1'000'000}, w.r());
    }
    const std::size_t on_ground =
        w.r()
            .get<c::Contacts>(w.r().child_by_name(link_of(w.r(), ground), "collision"))
            .points.size();
    std::size_t on_boxes = 0;
    std::vector<Pose3d> poses;
    for (ecs::Entity l : links) {
      on_boxes += w.r().get<c::Contacts>(w.r().child_by_name(l, "collision")).points.size();
      poses.push_back(w.r().get<c::WorldPose>(l).value);
    }
    *contacts = on_ground + (on_boxes - on_ground) / 2;
    return poses;
  };
  std::size_t grown_contacts = 0, roomy_contacts = 0;
  const auto grown = run(0, &grown_contacts);
  const auto roomy = run(1000, &roomy_contacts);
  EXPECT_GE(grown_contacts, 12u * 4) << "more contacts than the build's room (4)";
  EXPECT_EQ(grown_contacts, roomy_contacts);
  ASSERT_EQ(grown.size(), roomy.size());
  for (std::size_t i = 0; i < grown.size(); ++i) {
    EXPECT_NEAR((grown[i].Pos() - roomy[i].Pos()).Length(), 0, 1e-12) << "box " << i;
  }
  EXPECT_LT(grown[5].Pos().X() - grown[0].Pos().X(), 5 * 0.2 + 0.02) << "pushed into a row";
}

// Contacts that more than double in one step: the buffers double as often as they need at once,
// both ways a step can fill them. 12 boxes 1 m apart, where no contact can occur (room for 4):
// teleported from 1 m up onto the ground (48 contacts inside the step: grown there), or dropped
// from 0.15 m above it, landing together (48 at the step's end: grown before the next step);
// against an engine with room from the start.
TEST(Physics, ContactsThatMoreThanDoubleInOneStepGrowTheBuffersUntilTheyFit) {
  auto run = [](int room, bool teleport, std::size_t* on_ground) {
    TestWorld w;
    const auto ground = w.ground();
    std::vector<ecs::Entity> boxes;
    for (int i = 0; i < 12; ++i) {
      boxes.push_back(w.box("b" + std::to_string(i), {1.0 * i, 0, teleport ? 1.0 : 0.25},
                            {0.2, 0.2, 0.2}, 1.0));
    }
    auto engine = make_mujoco_engine_with_room(room);
    engine->build(w.r(), w.world());
    if (teleport) {  // resting on the ground, in contact at once
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        w.r().add<c::WorldPoseCmd>(boxes[i], Pose3d(1.0 * i, 0, 0.0999, 0, 0, 0));
      }
      engine->step(Duration{1'000'000}, w.r());
      for (ecs::Entity b : boxes) w.r().remove<c::WorldPoseCmd>(b);
    }
    for (int k = 0; k < 300; ++k) engine->step(Duration{1'000'000}, w.r());
    *on_ground = w.r()
                     .get<c::Contacts>(w.r().child_by_name(link_of(w.r(), ground), "collision"))
                     .points.size();
    std::vector<Pose3d> poses;
    for (ecs::Entity b : boxes) poses.push_back(w.r().get<c::WorldPose>(link_of(w.r(), b)).value);
    return poses;
  };
  for (const bool teleport : {true, false}) {
    SCOPED_TRACE(teleport ? "teleported onto the ground" : "dropped together");
    std::size_t grown_contacts = 0, roomy_contacts = 0;
    const auto grown = run(0, teleport, &grown_contacts);
    const auto roomy = run(1000, teleport, &roomy_contacts);
    EXPECT_GE(grown_contacts, 12u * 4) << "every box on the ground";
    EXPECT_EQ(grown_contacts, roomy_contacts);
    for (std::size_t i = 0; i < grown.size(); ++i) {
      EXPECT_NEAR((grown[i].Pos() - roomy[i].Pos()).Length(), 0, 1e-12) << "box " << i;
    }
  }
}

TEST(Physics, IslandsRefuseCommandsNothingSimulatesAndResetExactly) {
  TestWorld w;
  const auto ground = w.ground();
  const auto box = w.box("box", {0, 0, 1}, {0.2, 0.2, 0.2}, 1.0);
  w.r().add<c::PhysicsIslands>(w.world());
  w.start();
  const auto link = link_of(w.r(), box);
  w.step(200);
  const Pose3d after200 = w.r().get<c::WorldPose>(link).value;
  w.runner->reset_now();
  w.step(200);
  EXPECT_EQ(w.r().get<c::WorldPose>(link).value, after200) << "reset is exact";
  // A wrench on the static ground: no island moves it.
  w.r().add<c::ExternalWorldWrenchCmd>(link_of(w.r(), ground), Vector3d(1, 0, 0), Vector3d::Zero);
  try {
    w.step();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("ExternalWorldWrenchCmd needs a moving link"));
  }
  w.r().remove<c::ExternalWorldWrenchCmd>(link_of(w.r(), ground));
  // A teleport of something that is neither a model nor a link.
  w.r().add<c::WorldPoseCmd>(w.r().child_by_name(link, "collision"), Pose3d(0, 0, 3, 0, 0, 0));
  try {
    w.step();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("WorldPoseCmd needs a model or link"));
  }
}

TEST(Physics, JointVelocityCommandIsTracked) {
  TestWorld w;
  w.ground();
  const auto model = w.model("rotorcraft", Pose3d(0, 0, 0.05, 0, 0, 0));
  const auto base = w.link(model, "base", Pose3d::Zero, 1.0, {0.01, 0.01, 0.01});
  w.collision(base, "collision", c::Geometry{c::BoxShape{{0.2, 0.2, 0.1}}});
  const auto rotor = w.link(model, "rotor", Pose3d(0, 0, 0.1, 0, 0, 0), 0.01, {1e-5, 1e-5, 2e-5});
  c::JointAxisData axis;
  axis.xyz = {0, 0, 1};
  const auto joint = w.joint(model, "rotor_joint", c::JointType::kContinuous, base, rotor,
                             Pose3d(0, 0, 0.1, 0, 0, 0), axis);
  w.start();
  w.r().add<c::JointTransmittedWrench>(joint);  // requested: computed from this step on
  w.r().add<c::JointVelocityCmd>(joint, std::vector<double>{100.0});
  w.step(500);
  EXPECT_NEAR(w.r().get<c::JointVelocity>(joint).data.at(0), 100.0, 1e-3);
  EXPECT_NEAR(w.r().get<c::JointPosition>(joint).data.at(0), 100.0 * 0.5, 0.2);
  EXPECT_NEAR(w.r().get<c::AngularVelocity>(rotor).value.Z(), 100.0, 0.1);
  // The rotor's reaction is transmitted to the base through the joint: the base's weight is
  // not, but the rotor's weight is (child pulls down on parent; parent pushes up on child).
  const auto& tw = w.r().get<c::JointTransmittedWrench>(joint);
  EXPECT_NEAR(tw.force.Z(), 0.01 * kG, 1e-6);
  // Released: friction-free rotor keeps spinning near the last speed.
  w.r().remove<c::JointVelocityCmd>(joint);
  w.step(10);
  EXPECT_NEAR(w.r().get<c::JointVelocity>(joint).data.at(0), 100.0, 1.0);
}

// A flywheel on a hinge about z from the world: inertia 1e-3 kg·m² about its axis, no gravity
// torque. The joint's effort limit and friction as given.
struct Flywheel {
  ecs::Entity link = ecs::kNullEntity, joint = ecs::kNullEntity;
};
Flywheel flywheel(TestWorld& w, double effort, double friction = 0) {
  const auto model = w.model("flywheel", Pose3d(0, 0, 1, 0, 0, 0));
  Flywheel f;
  f.link = w.link(model, "wheel", Pose3d::Zero, 1.0, {1e-3, 1e-3, 1e-3});
  c::JointAxisData axis;
  axis.xyz = {0, 0, 1};
  axis.effort = effort;
  axis.friction = friction;
  f.joint = w.joint(model, "axle", c::JointType::kContinuous, ecs::kNullEntity, f.link,
                    Pose3d(0, 0, 1, 0, 0, 0), axis);
  return f;
}
double speed(TestWorld& w, const Flywheel& f) {
  return w.r().get<c::JointVelocity>(f.joint).data.at(0);
}

// A velocity command is a servo, as DART's: it reaches the command by exerting at most the
// joint's effort limit. 0.1 N·m on 1e-3 kg·m² is 100 rad/s²: 50 rad/s after 0.5 s, 100 rad/s
// (the command) after 1 s, then held; commanded to 0 it brakes at the same rate.
TEST(Physics, JointVelocityCommandIsAServoBoundedByTheEffortLimit) {
  TestWorld w;
  const Flywheel f = flywheel(w, 0.1);
  w.start();
  w.r().add<c::JointVelocityCmd>(f.joint, std::vector<double>{100.0});
  w.step(500);
  EXPECT_NEAR(speed(w, f), 50.0, 1e-3);
  // Semi-implicit Euler: the position is the sum of the step-end velocities times dt.
  const double dt = 0.001;
  EXPECT_NEAR(w.r().get<c::JointPosition>(f.joint).data.at(0), 100.0 * dt * dt * 500 * 501 / 2,
              1e-6);
  w.step(600);
  EXPECT_NEAR(speed(w, f), 100.0, 1e-6);
  w.r().get<c::JointVelocityCmd>(f.joint).data[0] = 0;
  w.step(250);
  EXPECT_NEAR(speed(w, f), 75.0, 1e-3);
}

// Without an effort limit the servo holds the command within the step against any load: a
// 0.5 N·m brake on the flywheel (500 rad/s², 0.5 rad/s per step were the speed set only at the
// start of the step) leaves it at the command.
TEST(Physics, AnUnlimitedServoHoldsItsVelocityAgainstALoad) {
  TestWorld w;
  const Flywheel f = flywheel(w, -1);
  w.start();
  w.r().add<c::JointVelocityCmd>(f.joint, std::vector<double>{100.0});
  w.step();
  for (int i = 0; i < 200; ++i) {
    w.r().set(f.link, c::ExternalWorldWrenchCmd{Vector3d::Zero, Vector3d(0, 0, -0.5)});
    w.step();
    ASSERT_NEAR(speed(w, f), 100.0, 1e-3) << "step " << i;
  }
}

// Gazebo's Physics applies a joint's JointVelocityCmd only when it has no JointForceCmd: 0.1 N·m
// spins the flywheel up at 100 rad/s² whatever the velocity command says.
TEST(Physics, AJointForceCommandTakesPrecedenceOverAVelocityCommand) {
  TestWorld w;
  const Flywheel f = flywheel(w, -1);
  w.start();
  w.r().add<c::JointVelocityCmd>(f.joint, std::vector<double>{-30.0});
  sensors::testing::LogCapture log;
  for (int i = 0; i < 100; ++i) {
    w.r().set(f.joint, c::JointForceCmd{{0.1}});
    w.step();
  }
  EXPECT_NEAR(speed(w, f), 10.0, 1e-6);
  // Said once, naming the joint.
  int said = 0;
  for (const auto& line : log.lines()) {
    if (line.find("JointVelocityCmd is not applied") == std::string::npos) continue;
    ++said;
    EXPECT_THAT(line, ::testing::HasSubstr("axle"));
  }
  EXPECT_EQ(said, 1);
}

// While commanded, the servo replaces the joint's Coulomb friction (0.01 N·m); released, the
// friction is back: 10 rad/s² of braking on the flywheel.
TEST(Physics, AReleasedServoGivesTheJointItsFrictionBack) {
  TestWorld w;
  const Flywheel f = flywheel(w, -1, 0.01);
  w.start();
  w.r().add<c::JointVelocityCmd>(f.joint, std::vector<double>{50.0});
  w.step(100);
  EXPECT_NEAR(speed(w, f), 50.0, 1e-3);
  w.r().remove<c::JointVelocityCmd>(f.joint);
  w.step(1000);
  EXPECT_NEAR(speed(w, f), 40.0, 0.05);
  w.runner->reset_now();
  w.step(100);
  EXPECT_NEAR(speed(w, f), 0.0, 1e-9) << "reset: no servo, at rest";
}

// A step whose only constraint rows are unlimited servos (a flying multicopter's rotors) is
// solved per kinematic tree without MuJoCo's solver; with any other row (here a second model's
// joint friction, a tree of its own) the solver runs. Both give the same motion: a tumbling
// body with four rotors at different commands and loads, 300 steps.
TEST(Physics, ServosAloneAreSolvedAsTheSolverWould) {
  auto fly = [](bool other_row) {
    TestWorld w(Duration{1'000'000}, Vector3d::Zero);
    const auto model = w.model("quad", Pose3d(0, 0, 1, 0, 0, 0));
    const auto base = w.link(model, "base", Pose3d::Zero, 1.5, {0.02, 0.03, 0.04});
    std::vector<ecs::Entity> rotors, joints;
    for (int i = 0; i < 4; ++i) {
      const Pose3d at(0.2 * std::cos(i * M_PI / 2), 0.2 * std::sin(i * M_PI / 2), 0.05, 0, 0, 0);
      rotors.push_back(w.link(model, "rotor" + std::to_string(i), at, 0.02, {2.5e-5, 2.5e-5, 4e-5}));
      c::JointAxisData axis;
      axis.xyz = {0, 0.1 * i, 1};
      axis.effort = std::numeric_limits<double>::infinity();  // libsdformat's without <effort>
      joints.push_back(w.joint(model, "joint" + std::to_string(i), c::JointType::kContinuous, base,
                               rotors.back(), at, axis));
    }
    if (other_row) flywheel(w, -1, 0.01);  // at rest: its friction row holds it
    w.start();
    for (int step = 0; step < 300; ++step) {
      for (int i = 0; i < 4; ++i) {
        w.r().set(joints[i], c::JointVelocityCmd{{(i % 2 ? -1 : 1) * (300.0 + 40 * i + step)}});
        w.r().set(rotors[i], c::ExternalWorldWrenchCmd{Vector3d(0, 0, 0.5 + 0.1 * i),
                                                       Vector3d(0.01 * i, 0, -0.002)});
      }
      w.r().set(base, c::ExternalWorldWrenchCmd{Vector3d(0.3, 0, 0), Vector3d(0.01, 0.02, 0)});
      w.step();
    }
    std::vector<double> out;
    const Pose3d X = w.r().get<c::WorldPose>(base).value;
    for (double v : {X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(), X.Rot().X(), X.Rot().Y(),
                     X.Rot().Z()}) {
      out.push_back(v);
    }
    for (auto j : joints) out.push_back(w.r().get<c::JointVelocity>(j).data.at(0));
    return out;
  };
  const std::vector<double> alone = fly(false), solver = fly(true);
  ASSERT_EQ(alone.size(), solver.size());
  for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(alone[i], solver[i], 1e-9) << "pose " << i;
  for (std::size_t i = 7; i < alone.size(); ++i) {
    EXPECT_NEAR(alone[i], solver[i], 1e-6) << "rotor " << i - 7;
  }
  EXPECT_NEAR(alone[7], 599.0, 0.01) << "the rotor at its last command";
  EXPECT_GT(std::abs(alone[0]), 0.01) << "the body moved";
}

// JointTransmittedWrench is computed (mj_rnePostConstraint) only where some entity holds one:
// Physics adds it to joints with a force_torque sensor; other readers add it themselves.
TEST(Physics, TransmittedWrenchOnRequestMatchesStaticEquilibrium) {
  TestWorld w;
  const double mb = 1.0, ma = 2.0, Lb = 0.5, La = 0.3;
  // A bob hanging at rest from a hinge about y; an arm welded to the bob sticks out along y
  // (the hinge axis), so gravity's torque on it is about x and carried by the hinge: at rest.
  // The weld's frame is yawed 90° so that its joint frame differs from the world frame.
  const auto model = w.model("pendulum", Pose3d(0, 0, 1, 0, 0, 0));
  const auto bob = w.link(model, "bob", Pose3d(0, 0, -Lb, 0, 0, 0), mb, {1e-3, 1e-3, 1e-3});
  const auto arm = w.link(model, "arm", Pose3d(0, 0, -Lb, 0, 0, 0), ma, {1e-3, 1e-3, 1e-3},
                          Pose3d(0, La, 0, 0, 0, 0));
  c::JointAxisData axis;
  axis.xyz = {0, 1, 0};
  const auto hinge = w.joint(model, "hinge", c::JointType::kRevolute, ecs::kNullEntity, bob,
                             Pose3d(0, 0, 1, 0, 0, 0), axis);
  const auto weld =
      w.joint(model, "weld", c::JointType::kFixed, bob, arm, Pose3d(0, 0, 1 - Lb, 0, 0, M_PI / 2));
  w.start();
  w.step(10);
  // Nobody asked: the component is absent (never a stale zero), and no extra pass runs.
  EXPECT_FALSE(w.r().has<c::JointTransmittedWrench>(weld));
  EXPECT_FALSE(w.r().has<c::JointTransmittedWrench>(hinge));

  // Requested mid-run on the weld only: filled from the next step.
  w.r().add<c::JointTransmittedWrench>(weld);
  w.step();
  EXPECT_FALSE(w.r().has<c::JointTransmittedWrench>(hinge));
  const double g = kG;
  {
    // The bob holds the arm up (F = ma·g) and cancels gravity's torque about the weld origin:
    // τ_W = −(La ŷ × (−ma g ẑ)) = (ma g La, 0, 0); in the weld frame (x_J = y_W, y_J = −x_W):
    // τ_J = (0, −ma g La, 0).
    const auto& tw = w.r().get<c::JointTransmittedWrench>(weld);
    EXPECT_NEAR(tw.force.X(), 0, 1e-9);
    EXPECT_NEAR(tw.force.Y(), 0, 1e-9);
    EXPECT_NEAR(tw.force.Z(), ma * g, 1e-9);
    EXPECT_NEAR(tw.torque.X(), 0, 1e-9);
    EXPECT_NEAR(tw.torque.Y(), -ma * g * La, 1e-9);
    EXPECT_NEAR(tw.torque.Z(), 0, 1e-9);
  }
  // The hinge too: the world carries both weights, and the arm's torque about x.
  w.r().add<c::JointTransmittedWrench>(hinge);
  w.step();
  {
    const auto& th = w.r().get<c::JointTransmittedWrench>(hinge);
    EXPECT_NEAR(th.force.X(), 0, 1e-9);
    EXPECT_NEAR(th.force.Y(), 0, 1e-9);
    EXPECT_NEAR(th.force.Z(), (ma + mb) * g, 1e-9);
    EXPECT_NEAR(th.torque.X(), ma * g * La, 1e-9);
    EXPECT_NEAR(th.torque.Y(), 0, 1e-9);
    EXPECT_NEAR(th.torque.Z(), 0, 1e-9);
    EXPECT_NEAR(w.r().get<c::JointTransmittedWrench>(weld).torque.Y(), -ma * g * La, 1e-9);
  }
  // Released: removing the components stops the computation; the run goes on, still at rest.
  w.r().remove<c::JointTransmittedWrench>(weld);
  w.r().remove<c::JointTransmittedWrench>(hinge);
  w.step(10);
  EXPECT_EQ(w.r().count<c::JointTransmittedWrench>(), 0u);
  EXPECT_NEAR(w.r().get<c::JointPosition>(hinge).data.at(0), 0, 1e-12);
}

struct Trace {
  std::vector<double> values;
  bool operator==(const Trace&) const = default;
};

Trace run_trace(TestWorld& w, int steps) {
  Trace t;
  const auto link = link_of(w.r(), w.r().find_scoped("test::box"));
  for (int k = 0; k < steps; ++k) {
    w.step();
    const auto& p = w.r().get<c::WorldPose>(link).value;
    const auto& v = w.r().get<c::WorldLinearVelocity>(link).value;
    t.values.insert(t.values.end(), {p.Pos().X(), p.Pos().Y(), p.Pos().Z(), p.Rot().W(),
                                     p.Rot().X(), v.X(), v.Y(), v.Z()});
  }
  return t;
}

void tumbling_box_world(TestWorld& w) {
  w.ground();
  const auto box = w.box("box", {0, 0, 0.5}, {0.2, 0.3, 0.1}, 1.0);
  w.r().replace<c::WorldPose>(box, c::WorldPose{Pose3d(0, 0, 0.5, 0.3, 0.2, 0.1)});
  auto link = link_of(w.r(), box);
  w.r().replace<c::WorldPose>(link, c::WorldPose{Pose3d(0, 0, 0.5, 0.3, 0.2, 0.1)});
}

// Pose algebra: composing with a quaternion's scaled copy (an un-normalised SDF quat_xyzw)
// gives the same rotation; inverse undoes compose.
TEST(Physics, PoseComposeIgnoresQuaternionScaleAndInverseUndoesIt) {
  const Pose3d a(1, 2, 3, 0.3, -0.2, 0.9);
  const Pose3d b(-0.5, 0.25, 2, 0.1, 0.4, -1.2);
  const Quaterniond q = a.Rot();
  const Pose3d a2(a.Pos(), Quaterniond(2 * q.W(), 2 * q.X(), 2 * q.Y(), 2 * q.Z()));
  EXPECT_NEAR(compose(a2, b).Pos().Distance(compose(a, b).Pos()), 0, 1e-12);
  EXPECT_NEAR(compose(a, b).Pos().Distance(a.Pos() + a.Rot().RotateVector(b.Pos())), 0, 1e-12);
  const Pose3d id = compose(inverse(a), a);
  EXPECT_NEAR(id.Pos().Length(), 0, 1e-12);
  EXPECT_NEAR(std::abs(id.Rot().W()), 1, 1e-12);
}

TEST(Physics, TwoRunsAreBitIdentical) {
  TestWorld a, b;
  tumbling_box_world(a);
  tumbling_box_world(b);
  a.start();
  b.start();
  EXPECT_EQ(run_trace(a, 1500), run_trace(b, 1500));
}

TEST(Physics, ResetReproducesAFreshRunBitForBit) {
  TestWorld w;
  tumbling_box_world(w);
  w.start();
  const Trace first = run_trace(w, 1500);
  w.runner->reset_now();
  const Trace second = run_trace(w, 1500);
  EXPECT_EQ(first, second);
  // Also after a spawn forced a rebuild before the reset.
  w.box("extra", {1, 0, 0.5}, {0.1, 0.1, 0.1}, 1.0);
  w.step(10);
  w.runner->reset_now();
  EXPECT_FALSE(w.r().find_scoped("test::extra"));
  EXPECT_EQ(run_trace(w, 1500), first);
}

TEST(Physics, SpawnAndRemoveRebuildAndCarryStateAcross) {
  TestWorld w;
  const auto box = w.box("box", {0, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  const auto link = link_of(w.r(), box);
  w.step(100);
  const auto spawned = w.box("spawned", {2, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
  w.step(100);
  // The first box fell uninterrupted: z = z0 − g dt² N(N+1)/2 for N = 200.
  const double dt = 1e-3;
  EXPECT_NEAR(w.r().get<c::WorldPose>(link).value.Pos().Z(), 10 - kG * dt * dt * 200 * 201 / 2,
              1e-9);
  // The spawned box started at rest from its spawn pose.
  const auto slink = link_of(w.r(), spawned);
  EXPECT_NEAR(w.r().get<c::WorldPose>(slink).value.Pos().Z(), 10 - kG * dt * dt * 100 * 101 / 2,
              1e-9);
  EXPECT_NEAR(w.r().get<c::WorldPose>(slink).value.Pos().X(), 2, 1e-12);
  w.r().request_remove(box);
  w.step(100);
  EXPECT_NEAR(w.r().get<c::WorldPose>(slink).value.Pos().Z(), 10 - kG * dt * dt * 200 * 201 / 2,
              1e-9);
}

// A system after Physics in Update that swaps one model for another in the same step: the
// counts are unchanged and the new entities leave the "new" list at end_step, so only Physics'
// own PostUpdate look at the step's structural changes catches it.
TEST(Physics, ModelSwappedAfterPhysicsInTheSameStepIsSimulatedNextStep) {
  TestWorld w;
  const auto a = w.box("a", {0, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
  struct Swapper final : System, ISystemUpdate {
    int priority() const override { return priority::kPhysics + 1; }
    void update(const UpdateInfo& info, ecs::Registry& r) override {
      if (info.iterations != 99) return;
      r.request_remove(old_model);
      spawned = world->box("b", {2, 0, 10}, {0.1, 0.1, 0.1}, 1.0);
    }
    TestWorld* world = nullptr;
    ecs::Entity old_model = ecs::kNullEntity;
    ecs::Entity spawned = ecs::kNullEntity;
  };
  auto swapper = std::make_unique<Swapper>();
  swapper->world = &w;
  swapper->old_model = a;
  Swapper* sw = swapper.get();
  w.runner->add_system(std::move(swapper), w.world(), Element::empty("plugin"), "swapper", "test");
  w.start();
  w.step(200);
  ASSERT_NE(sw->spawned, ecs::kNullEntity);
  // Built into the model at step 101 and stepped 100 times from rest.
  const double dt = 1e-3;
  EXPECT_NEAR(w.r().get<c::WorldPose>(link_of(w.r(), sw->spawned)).value.Pos().Z(),
              10 - kG * dt * dt * 100 * 101 / 2, 1e-9);
}

TEST(Physics, TeleportAndVelocityCommands) {
  TestWorld w(Duration{1'000'000}, {0, 0, 0});
  const auto box = w.box("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  auto& reg = w.r();
  const auto link = link_of(reg, box);
  reg.add<c::WorldPoseCmd>(box, Pose3d(3, 4, 5, 0, 0, M_PI / 2));
  w.step();
  EXPECT_FALSE(reg.has<c::WorldPoseCmd>(box));
  EXPECT_NEAR(reg.get<c::WorldPose>(box).value.Pos().X(), 3, 1e-12);
  EXPECT_NEAR(reg.get<c::WorldPose>(link).value.Pos().Y(), 4, 1e-12);
  // Model-frame velocity (1, 0, 0) with the model yawed 90°: world velocity (0, 1, 0).
  reg.add<c::LinearVelocityCmd>(box, Vector3d(1, 0, 0));
  w.step(1000);
  EXPECT_NEAR(reg.get<c::WorldLinearVelocity>(link).value.Y(), 1, 1e-9);
  EXPECT_NEAR(reg.get<c::WorldPose>(link).value.Pos().Y(), 5, 1e-6);
  EXPECT_NEAR(reg.get<c::LinearVelocity>(link).value.X(), 1, 1e-9);
  reg.remove<c::LinearVelocityCmd>(box);
  reg.add<c::AngularVelocityCmd>(box, Vector3d(0, 0, 2));
  w.step(10);
  EXPECT_NEAR(reg.get<c::AngularVelocity>(link).value.Z(), 2, 1e-9);
}

c::FluidAddedMass diagonal_added_mass(std::array<double, 6> diag) {
  c::FluidAddedMass a;
  for (int i = 0; i < 6; ++i) a.m[7 * i] = diag[i];
  return a;
}

// <fluid_added_mass> as DART adds it to the spatial inertia: a body at rest, turned 90° about
// z, accelerates at F/(m + M_A) along each of its axes and at τ/(I + M_A) about them.
TEST(Physics, FluidAddedMassAddsToTheInertiaOfAFreeBody) {
  TestWorld w(Duration{1'000'000}, {0, 0, 0});
  const auto model = w.model("hull", Pose3d(0, 0, 1, 0, 0, M_PI / 2));
  const auto link = w.link(model, "link", Pose3d::Zero, 2.0, {0.1, 0.2, 0.3});
  w.r().add<c::FluidAddedMass>(link, diagonal_added_mass({1, 3, 0, 0.05, 0, 0.3}));
  w.start();
  auto& reg = w.r();
  // World +y is the body's x, world −x its y: 2 N each, and 0.6 N·m about z.
  reg.add<c::ExternalWorldWrenchCmd>(link, Vector3d(-2, 2, 0), Vector3d(0, 0, 0.6));
  w.step();
  const Vector3d a = reg.get<c::WorldLinearAcceleration>(link).value;
  EXPECT_NEAR(a.Y(), 2.0 / (2 + 1), 1e-9);
  EXPECT_NEAR(a.X(), -2.0 / (2 + 3), 1e-9);
  EXPECT_NEAR(a.Z(), 0, 1e-12);
  EXPECT_NEAR(reg.get<c::AngularAcceleration>(link).value.Z(), 0.6 / (0.3 + 0.3), 1e-9);
  EXPECT_NEAR(reg.get<c::WorldLinearVelocity>(link).value.Y(), 2.0 / 3 * 1e-3, 1e-12);
  // Gravity pulls the link's own mass, not the added one (DART applies m·g).
  TestWorld g;
  const auto gm = g.model("hull", Pose3d(0, 0, 1, 0, 0, 0));
  const auto gl = g.link(gm, "link", Pose3d::Zero, 2.0, {0.1, 0.2, 0.3});
  g.r().add<c::FluidAddedMass>(gl, diagonal_added_mass({0, 0, 2, 0, 0, 0}));
  g.start();
  g.step();
  EXPECT_NEAR(g.r().get<c::WorldLinearAcceleration>(gl).value.Z(), -kG * 2 / (2 + 2), 1e-9);
}

// A slender hull (added mass 0.5 kg along its axis, 5 kg across) coasting at 16.7° to its axis
// in zero gravity: Kirchhoff's equations keep its kinetic energy ½·Vᵀ(M + M_A)·V and its
// impulse — linear R·(M + M_A)·V and angular about the world origin — while the Munk moment
// (M_y − M_x)·u·v turns it broadside, away from its velocity (yaw < 0 here), at first with
// the yaw acceleration that moment gives; the invariants drift only by the integrator's
// first-order error; without added mass it coasts straight.
TEST(Physics, FluidAddedMassKeepsEnergyAndImpulseAndTurnsASlenderHullBroadside) {
  auto run = [](bool added, int steps_per_ms, double& yaw, std::array<double, 3>& drift,
                double& alpha, double& munk) {
    TestWorld w(Duration{1'000'000 / steps_per_ms}, {0, 0, 0});
    const auto model = w.model("hull", Pose3d(0, 0, 1, 0, 0, 0));
    const double m = 1.0;
    const Vector3d I(0.1, 0.5, 0.5);
    const auto link = w.link(model, "link", Pose3d::Zero, m, I);
    const auto A = diagonal_added_mass({0.5, 5, 5, 0.01, 0.2, 0.2});
    if (added) w.r().add<c::FluidAddedMass>(link, A);
    w.start();
    auto& reg = w.r();
    reg.add<c::LinearVelocityCmd>(model, Vector3d(1, 0.3, 0));
    w.step();
    reg.remove<c::LinearVelocityCmd>(model);
    auto invariants = [&] {
      const Pose3d X = reg.get<c::WorldPose>(link).value;
      const Vector3d v = reg.get<c::LinearVelocity>(link).value;
      const Vector3d om = reg.get<c::AngularVelocity>(link).value;
      double M[6] = {m, m, m, I.X(), I.Y(), I.Z()};
      if (added) {
        for (int i = 0; i < 6; ++i) M[i] += A(i, i);
      }
      const Vector3d p(M[0] * v.X(), M[1] * v.Y(), M[2] * v.Z());
      const Vector3d l(M[3] * om.X(), M[4] * om.Y(), M[5] * om.Z());
      const double e = 0.5 * (p.Dot(v) + l.Dot(om));
      const Vector3d P = X.Rot().RotateVector(p);
      const Vector3d L = X.Rot().RotateVector(l) + X.Pos().Cross(P);
      return std::array<double, 7>{e, P.X(), P.Y(), P.Z(), L.X(), L.Y(), L.Z()};
    };
    const auto i0 = invariants();
    // The first step's yaw acceleration: the Munk moment −(M_A,y − M_A,x)·u·v over I_z + M_A,r
    // (the other terms are of the order of the still small ω).
    const Vector3d v0 = reg.get<c::LinearVelocity>(link).value;
    munk = added ? -(A(1, 1) - A(0, 0)) * v0.X() * v0.Y() / (I.Z() + A(5, 5)) : 0.0;
    w.step();
    alpha = reg.get<c::AngularAcceleration>(link).value.Z();
    w.step(200 * steps_per_ms - 1);
    yaw = reg.get<c::WorldPose>(link).value.Rot().Yaw();  // after 0.2 s
    w.step(1800 * steps_per_ms);                          // 2 s in all
    const auto i1 = invariants();
    drift[0] = std::abs(i1[0] - i0[0]) / i0[0];
    drift[1] = std::hypot(i1[1] - i0[1], i1[2] - i0[2], i1[3] - i0[3]);
    drift[2] = std::hypot(i1[4] - i0[4], i1[5] - i0[5], i1[6] - i0[6]);
  };
  double yaw = 0, alpha = 0, munk = 0;
  std::array<double, 3> drift{}, half{};
  run(true, 4, yaw, drift, alpha, munk);  // 250 µs steps
  EXPECT_NEAR(alpha, munk, 1e-3 * std::abs(munk));
  EXPECT_LT(munk, -1.5);
  EXPECT_LT(yaw, -0.02);
  // Semi-implicit Euler's first-order error (measured 9.0e-4, 6.9e-4, 1.4e-3), halved with the
  // step: wrong Coriolis terms would leave a drift that does not shrink.
  run(true, 8, yaw, half, alpha, munk);  // 125 µs steps
  const char* what[] = {"energy (relative)", "linear impulse", "angular impulse"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_LT(drift[i], 2e-3) << what[i];
    EXPECT_NEAR(half[i] / drift[i], 0.5, 0.05) << what[i];
  }
  run(false, 4, yaw, drift, alpha, munk);
  EXPECT_NEAR(yaw, 0, 1e-12);
  EXPECT_NEAR(alpha, 0, 1e-12);
}

TEST(Physics, FluidAddedMassOnALinkOnAJointIsRefused) {
  TestWorld w;
  const auto model = w.model("arm", Pose3d::Zero);
  const auto base = w.link(model, "base", Pose3d::Zero, 1.0, {0.1, 0.1, 0.1});
  const auto fin = w.link(model, "fin", Pose3d(1, 0, 0, 0, 0, 0), 1.0, {0.1, 0.1, 0.1});
  w.joint(model, "hinge", c::JointType::kRevolute, base, fin, Pose3d(1, 0, 0, 0, 0, 0));
  w.r().add<c::FluidAddedMass>(fin, diagonal_added_mass({1, 1, 1, 0, 0, 0}));
  try {
    w.start();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("arm::fin"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("<fluid_added_mass> is supported on a link that "
                                               "moves freely"));
  }
}

TEST(Physics, NanForceStopsTheRunNamingTheLink) {
  TestWorld w;
  const auto box = w.box("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  w.r().add<c::ExternalWorldWrenchCmd>(link_of(w.r(), box), Vector3d(NAN, 0, 0), Vector3d::Zero);
  try {
    w.step();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("test::box::link"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unstable"));
  }
}

TEST(Physics, CommandOnAnEntityPhysicsDoesNotSimulateIsAnError) {
  TestWorld w;
  w.box("box", {0, 0, 1}, {0.1, 0.1, 0.1}, 1.0);
  w.start();
  w.r().add<c::JointForceCmd>(w.world(), std::vector<double>{1.0});
  EXPECT_THAT([&] { w.step(); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("JointForceCmd needs a joint")));
}

TEST(Physics, UniversalAndBallJointsRun) {
  TestWorld w;
  const auto model = w.model("arm", Pose3d(0, 0, 2, 0, 0, 0));
  const auto a = w.link(model, "a", Pose3d::Zero, 1.0, {0.01, 0.01, 0.01});
  const auto b = w.link(model, "b", Pose3d(0, 0, -0.5, 0, 0, 0), 1.0, {0.01, 0.01, 0.01});
  const auto cl = w.link(model, "c", Pose3d(0, 0, -1.0, 0, 0, 0), 1.0, {0.01, 0.01, 0.01});
  w.joint(model, "fix", c::JointType::kFixed, ecs::kNullEntity, a, Pose3d(0, 0, 2, 0, 0, 0));
  c::JointAxisData x_axis;
  x_axis.xyz = {1, 0, 0};
  const auto u =
      w.joint(model, "u", c::JointType::kUniversal, a, b, Pose3d(0, 0, 2, 0, 0, 0), x_axis);
  const auto ball = w.joint(model, "ball", c::JointType::kBall, b, cl, Pose3d(0, 0, 1.5, 0, 0, 0));
  w.start();
  EXPECT_EQ(w.r().get<c::JointPosition>(u).data.size(), 2u);
  EXPECT_EQ(w.r().get<c::JointPosition>(ball).data.size(), 4u);
  w.r().add<c::JointVelocityReset>(u, std::vector<double>{1.0, 0.5});
  w.step(1000);
  EXPECT_NE(w.r().get<c::JointPosition>(u).data[0], 0.0);
  // Link a is welded to the world.
  EXPECT_NEAR(w.r().get<c::WorldPose>(a).value.Pos().Z(), 2, 1e-12);
  // Link c hangs at most 1 m below the anchor.
  EXPECT_LE((w.r().get<c::WorldPose>(cl).value.Pos() - Vector3d(0, 0, 2)).Length(), 1.0 + 1e-6);
}

}  // namespace
}  // namespace kestrel::physics
