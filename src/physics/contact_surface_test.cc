// Friction directions, the second friction coefficient and force-dependent slip, against what
// DART (gz-sim's engine) computes: physics/mujoco/contact_surface.h, src/physics/README.md
// ("Friction directions and slip").

#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/components/physics.h"
#include "kestrel/components/physics_islands.h"
#include "physics/test_worlds.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;
using ignition::math::Pose3d;
using ignition::math::Quaterniond;
using ignition::math::Vector3d;
using testing::link_of;
using testing::TestWorld;

constexpr double kG = 9.8;
constexpr double kMass = 2.0;

// A 0.2 m cube of kMass on a μ 1 ground, its collision turned by `yaw` in its link, pushed at
// its centre of mass by `force` (world frame) every step for `seconds`; returns its velocity.
struct Push {
  c::Surface surface;
  c::Surface ground;
  double yaw = 0;
  Vector3d force;
  double seconds = 1.0;
  // A SlipComplianceCmd on the cube's collision from the start (slip1 < 0: none).
  double cmd_slip1 = -1, cmd_slip2 = 0;
  bool islands = false;  // <kestrel:physics_islands/>
};
struct Pushed {
  Vector3d velocity;
  Vector3d friction;  // sum of the contact forces on the cube, tangential part
  std::size_t contacts = 0;
  double height = 0;
};
Pushed push(const Push& p) {
  TestWorld w;
  w.ground(p.ground);
  const auto model = w.model("cube", Pose3d(0, 0, 0.1, 0, 0, 0));
  const double I = kMass * 0.04 / 6;
  const auto link = w.link(model, "link", Pose3d::Zero, kMass, {I, I, I});
  const auto col = w.collision(link, "collision", c::Geometry{c::BoxShape{{0.2, 0.2, 0.2}}},
                               Pose3d(0, 0, 0, 0, 0, p.yaw), p.surface);
  if (p.cmd_slip1 >= 0) {
    w.r().add<c::SlipComplianceCmd>(col, c::SlipComplianceCmd{p.cmd_slip1, p.cmd_slip2});
  }
  if (p.islands) w.r().add<c::PhysicsIslands>(w.world());
  w.start();
  w.step(300);  // settled on the ground
  w.r().add<c::ExternalWorldWrenchCmd>(link);
  const int steps = static_cast<int>(p.seconds * 1000);
  for (int k = 0; k < steps; ++k) {
    w.r().get<c::ExternalWorldWrenchCmd>(link).force = p.force;
    w.step();
  }
  Pushed out;
  out.velocity = w.r().get<c::WorldLinearVelocity>(link).value;
  out.height = w.r().get<c::WorldPose>(link).value.Pos().Z();
  for (const auto& pt : w.r().get<c::Contacts>(col).points) {
    out.friction += pt.force - pt.normal * pt.force.Dot(pt.normal);
    ++out.contacts;
  }
  return out;
}

c::Surface surface(double mu, double mu2, Vector3d fdir1 = {}) {
  c::Surface s;
  s.mu = mu;
  s.mu2 = mu2;
  s.fdir1 = fdir1;
  return s;
}

// <mu>1 <mu2>0 with <fdir1>1 0 0 in the collision's frame: friction holds along fdir1 and
// there is none across it (a mecanum roller). Pushed across, the cube accelerates at F / m; along,
// it holds. Turning the collision by 90° turns the directions with it.
TEST(ContactSurface, SecondCoefficientActsAcrossTheFirstDirection) {
  const double F = 0.3 * kMass * kG;  // below μ·m·g along the first direction
  for (const double yaw : {0.0, M_PI / 2}) {
    SCOPED_TRACE(yaw);
    const Vector3d along = yaw == 0 ? Vector3d::UnitX : Vector3d::UnitY;
    const Vector3d across = yaw == 0 ? Vector3d::UnitY : Vector3d::UnitX;
    Push p;
    p.surface = surface(1, 0, {1, 0, 0});
    p.ground = surface(1, 1);
    p.yaw = yaw;
    p.force = across * F;
    const Pushed free = push(p);
    EXPECT_NEAR(free.velocity.Dot(across), F / kMass * 1.0, 1e-3 * F / kMass);
    p.force = along * F;
    EXPECT_LT(push(p).velocity.Length(), 1e-3);
  }
}

// Without <fdir1> on either surface DART takes the world's z axis, which on level ground has
// no projection: its first direction is then the world's x axis, whatever the body's heading.
TEST(ContactSurface, WithoutFdir1TheFirstDirectionOnLevelGroundIsTheWorldsX) {
  const double F = 0.3 * kMass * kG;
  for (const double yaw : {0.0, 0.7}) {
    SCOPED_TRACE(yaw);
    Push p;
    p.surface = surface(1, 0);
    p.ground = surface(1, 1);
    p.yaw = yaw;
    p.force = {0, F, 0};
    EXPECT_NEAR(push(p).velocity.Y(), F / kMass, 1e-3 * F / kMass);
    p.force = {F, 0, 0};
    EXPECT_LT(push(p).velocity.Length(), 1e-3);
  }
}

// The pair's coefficient per direction is the smaller of the two surfaces' (DART): a cube with
// μ 1 / μ2 1 on a ground with μ 1 / μ2 0 slides freely along the world's y.
TEST(ContactSurface, EachDirectionTakesTheSmallerCoefficient) {
  const double F = 0.3 * kMass * kG;
  Push p;
  p.surface = surface(1, 1);
  p.ground = surface(1, 0);
  p.force = {0, F, 0};
  EXPECT_NEAR(push(p).velocity.Y(), F / kMass, 1e-3 * F / kMass);
}

// Slip makes Physics solve with the elliptic cone and PGS (contact_surface.h): the run to compare
// with is one of a slip too small to show, which MuJoCo's own contact softness hides.
constexpr double kNoSlip = 1e-12;

// <slip1> s along <fdir1>: each contact slides at s × its friction force there, so a cube on n
// contacts pushed steadily by F moves at s·F/n faster than without slip. Across (slip2 = 0)
// nothing changes. The friction read back balances the push.
TEST(ContactSurface, SlipAddsSlipTimesFrictionForcePerContact) {
  const double F = 0.1 * kMass * kG, s = 0.02;
  Push p;
  p.ground = surface(1, 1);
  p.seconds = 2.0;
  for (const Vector3d& dir : {Vector3d::UnitX, Vector3d::UnitY}) {
    SCOPED_TRACE(dir);
    p.force = dir * F;
    p.surface = surface(1, 1, {1, 0, 0});
    p.surface.slip1 = kNoSlip;
    const Pushed plain = push(p);
    p.surface.slip1 = s;
    const Pushed slipping = push(p);
    ASSERT_GT(slipping.contacts, 0u);
    const double added = slipping.velocity.Dot(dir) - plain.velocity.Dot(dir);
    if (dir == Vector3d::UnitX) {
      EXPECT_NEAR(added, s * F / slipping.contacts, 1e-3 * s * F / slipping.contacts);
    } else {
      EXPECT_NEAR(added, 0, 1e-7);
    }
    EXPECT_NEAR(slipping.friction.Dot(dir), -F, 1e-3 * F);
  }
}

// The slip's rows push along the normal as before: a slipping cube rests at the same height.
TEST(ContactSurface, SlipLeavesTheNormalForceAsItWas) {
  Push p;
  p.ground = surface(1, 1);
  p.surface = surface(1, 1, {1, 0, 0});
  p.surface.slip1 = kNoSlip;
  const double plain = push(p).height;
  p.surface.slip1 = p.surface.slip2 = 0.05;
  EXPECT_NEAR(push(p).height, plain, 1e-9);
}

// A SlipComplianceCmd (what WheelSlip writes) replaces the surface's slip while it exists.
TEST(ContactSurface, SlipComplianceCommandReplacesTheSurfacesSlip) {
  const double F = 0.1 * kMass * kG, s = 0.02;
  Push p;
  p.ground = surface(1, 1);
  p.surface = surface(1, 1, {1, 0, 0});
  p.surface.slip1 = 0.5;  // replaced
  p.force = {F, 0, 0};
  p.seconds = 2.0;
  p.cmd_slip1 = kNoSlip;
  const Pushed plain = push(p);
  p.cmd_slip1 = s;
  const Pushed slipping = push(p);
  EXPECT_NEAR(slipping.velocity.X() - plain.velocity.X(), s * F / slipping.contacts,
              1e-3 * s * F / slipping.contacts);
}

// Removing the command gives the surface's slip back; a bad command stops the step naming the
// collision.
TEST(ContactSurface, SlipComplianceCommandReleasedAndRefused) {
  TestWorld w;
  w.ground(surface(1, 1));
  const auto box = w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, kMass, surface(1, 1, {1, 0, 0}));
  w.start();
  const auto link = link_of(w.r(), box);
  const auto col = w.r().child_by_name(link, "collision");
  w.step(300);
  w.r().add<c::ExternalWorldWrenchCmd>(link);
  auto run = [&](int steps) {
    for (int k = 0; k < steps; ++k) {
      w.r().get<c::ExternalWorldWrenchCmd>(link).force = {0.1 * kMass * kG, 0, 0};
      w.step();
    }
    return w.r().get<c::WorldLinearVelocity>(link).value.X();
  };
  const double plain = run(1000);
  w.r().add<c::SlipComplianceCmd>(col, c::SlipComplianceCmd{0.05, 0});
  EXPECT_GT(run(1000), plain + 0.005);
  w.r().remove<c::SlipComplianceCmd>(col);
  EXPECT_NEAR(run(2000), plain, 1e-4);
  w.r().add<c::SlipComplianceCmd>(col, c::SlipComplianceCmd{-1, 0});
  try {
    w.step();
    ADD_FAILURE() << "a negative slip was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("test::box::link::collision"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("SlipComplianceCmd -1 0"), std::string::npos) << e.what();
  }
}

// A ContactFrictionCmd (what LookupWheelSlip writes) sets the contact's coefficients outright,
// not the smaller of the pair's, from the step it appears; removed, the surfaces' come back.
TEST(ContactSurface, ContactFrictionCommandSetsTheCoefficients) {
  TestWorld w;
  w.ground(surface(0.5, 0.5));
  const auto box = w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, kMass, surface(1, 1));
  w.start();
  const auto link = link_of(w.r(), box);
  const auto col = w.r().child_by_name(link, "collision");
  w.step(300);
  w.r().add<c::ExternalWorldWrenchCmd>(link);
  const double F = 0.3 * kMass * kG;
  auto push_y = [&](int steps) {
    const double v0 = w.r().get<c::WorldLinearVelocity>(link).value.Y();
    for (int k = 0; k < steps; ++k) {
      w.r().get<c::ExternalWorldWrenchCmd>(link).force = {0, F, 0};
      w.step();
    }
    return w.r().get<c::WorldLinearVelocity>(link).value.Y() - v0;
  };
  auto speed_y = [&] { return w.r().get<c::WorldLinearVelocity>(link).value.Y(); };
  EXPECT_LT(std::abs(push_y(500)), 1e-3);  // μ 0.5 holds 0.3·m·g
  w.r().add<c::ContactFrictionCmd>(col, c::ContactFrictionCmd{1.0, 0.0});
  EXPECT_NEAR(push_y(500), F / kMass * 0.5, 1e-3 * F / kMass);  // none along the world's y
  w.r().get<c::ContactFrictionCmd>(col) = {0.0, 2.0};
  push_y(500);  // μ 2 along the world's y stops the slide against the push
  EXPECT_LT(std::abs(speed_y()), 1e-3);
  w.r().remove<c::ContactFrictionCmd>(col);
  EXPECT_LT(std::abs(push_y(500)), 1e-3);  // μ 0.5 again
  w.r().add<c::ContactFrictionCmd>(col, c::ContactFrictionCmd{NAN, 0});
  EXPECT_THROW(w.step(), Error);
}

// Two surfaces above μ 2 make the world's cone elliptic (physics_test
// LargeFrictionStillHoldsTheBodyUp): slip is exact there too.
TEST(ContactSurface, SlipOnSurfacesOfLargeFriction) {
  const double F = 0.1 * kMass * kG, s = 0.02;
  Push p;
  p.ground = surface(5, 5);
  p.seconds = 2.0;
  p.force = {F, 0, 0};
  p.surface = surface(5, 5, {1, 0, 0});
  p.surface.slip1 = kNoSlip;
  const Pushed plain = push(p);
  p.surface.slip1 = s;
  const Pushed slipping = push(p);
  EXPECT_NEAR(slipping.velocity.X() - plain.velocity.X(), s * F / slipping.contacts,
              1e-3 * s * F / slipping.contacts);
}

// Islands (each with its own MuJoCo model) apply slip as one model does; a surface command on
// a collision no island moves (the ground's) is refused.
TEST(ContactSurface, IslandsSlipAsOneModelAndRefuseStaticCollisions) {
  Push p;
  p.ground = surface(1, 1);
  p.surface = surface(1, 1, {1, 0, 0});
  p.surface.slip1 = 0.02;
  p.force = {0.1 * kMass * kG, 0, 0};
  const Pushed one = push(p);
  p.islands = true;
  const Pushed islands = push(p);
  EXPECT_NEAR(islands.velocity.X(), one.velocity.X(), 1e-9);
  TestWorld w;
  const auto ground = w.ground();
  w.box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, kMass);
  w.r().add<c::PhysicsIslands>(w.world());
  w.start();
  w.r().add<c::SlipComplianceCmd>(w.r().child_by_name(link_of(w.r(), ground), "collision"),
                                  c::SlipComplianceCmd{0.1, 0});
  try {
    w.step();
    ADD_FAILURE() << "a slip on the static ground was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "SlipComplianceCmd needs a collision of a moving link simulated by Physics"),
              std::string::npos)
        << e.what();
  }
}

// Slip and friction directions change nothing in determinism and reset.
TEST(ContactSurface, RunsAreBitIdenticalAndResetIsExact) {
  auto run = [](TestWorld& w, ecs::Entity link) {
    for (int k = 0; k < 500; ++k) {
      w.r().get<c::ExternalWorldWrenchCmd>(link).force = {3, 2, 0};
      w.step();
    }
    return w.r().get<c::WorldPose>(link).value;
  };
  c::Surface s = surface(1, 0.3, {1, 1, 0});
  s.slip1 = 0.01;
  s.slip2 = 0.03;
  TestWorld a, b;
  Pose3d X[2];
  int i = 0;
  for (TestWorld* w : {&a, &b}) {
    w->ground(surface(1, 1));
    const auto link = link_of(w->r(), w->box("box", {0, 0, 0.1}, {0.2, 0.2, 0.2}, kMass, s));
    w->r().add<c::ExternalWorldWrenchCmd>(link);  // in the state a reset returns to
    w->start();
    X[i++] = run(*w, link);
  }
  EXPECT_EQ(X[0], X[1]);
  const auto link = link_of(a.r(), a.r().find_scoped("test::box"));
  a.runner->reset_now();
  EXPECT_EQ(run(a, link), X[1]);
}

}  // namespace
}  // namespace kestrel::physics
