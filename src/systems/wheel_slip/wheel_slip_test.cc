// WheelSlip and LookupWheelSlip: each wheel's contact slides at slip × its friction force, with
// slip = compliance × rim speed / nominal normal force (gz-sim's formula); gz-sim's
// TricyclesUphill expectations ported; lateral creep on a side slope against the formula;
// commands, the slip map, reset and bad parameters.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "image/image.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/wheel_slip.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using testing::LoadedWorld;

constexpr double kRadius = 0.15;  // the wheels' (gz-sim's trisphere cycle)
constexpr double kSpin = 6.0;     // [rad/s]: gz-sim's test drives the rear wheels so

std::string inertial(double m, double i) {
  return "<inertial><mass>" + std::to_string(m) + "</mass><inertia><ixx>" + std::to_string(i) +
         "</ixx><iyy>" + std::to_string(i) + "</iyy><izz>" + std::to_string(i) +
         "</izz></inertia></inertial>";
}

// A sphere wheel on a spin joint about the frame's y axis, its collision's first friction
// direction along that axis when `fdir1` (what "lateral" means for WheelSlip then).
std::string wheel(const std::string& name, double x, double y, bool fdir1) {
  const std::string surface =
      fdir1 ? "<surface><friction><ode><fdir1>0 1 0</fdir1></ode></friction></surface>" : "";
  return "<link name='" + name + "'><pose>" + std::to_string(x) + " " + std::to_string(y) + " " +
         std::to_string(kRadius) + " 0 0 0</pose>" + inertial(0.5, 0.0045) +
         "<collision name='collision'><geometry><sphere><radius>" + std::to_string(kRadius) +
         "</radius></sphere></geometry>" + surface + "</collision></link>" +
         "<joint name='" + name + "_spin' type='revolute'><parent>frame</parent><child>" + name +
         "</child><axis><xyz>0 1 0</xyz></axis></joint>";
}

std::string wheel_params(const std::string& link, double lateral, double longitudinal,
                         double normal) {
  return "<wheel link_name='" + link + "'><slip_compliance_lateral>" + std::to_string(lateral) +
         "</slip_compliance_lateral><slip_compliance_longitudinal>" +
         std::to_string(longitudinal) + "</slip_compliance_longitudinal><wheel_normal_force>" +
         std::to_string(normal) + "</wheel_normal_force><wheel_radius>" +
         std::to_string(kRadius) + "</wheel_radius></wheel>";
}

// gz-sim's trisphere cycle (test/worlds/trisphere_cycle_wheel_slip.sdf), written from its
// numbers: a frame on a free front wheel and two driven rear wheels, WheelSlip on all three
// with normal forces 77 and 32 N and the given compliance.
constexpr double kFrameMass = 10.0;
constexpr double kCycleMass = kFrameMass + 3 * 0.5;
std::string trisphere(const std::string& name, double y, double compliance) {
  return "<model name='" + name + "'><pose>0 " + std::to_string(y) + " 0 0 0 0</pose>" +
         "<link name='frame'><pose>0 0 0.3 0 0 0</pose>" + inertial(kFrameMass, 0.3) +
         "<collision name='collision'><geometry><box><size>1.0 0.6 0.1</size></box></geometry>"
         "</collision></link>" +
         wheel("wheel_front", 0.6, 0, false) + wheel("wheel_rear_left", -0.8, 0.52, false) +
         wheel("wheel_rear_right", -0.8, -0.52, false) +
         "<plugin filename='ignition-gazebo-wheel-slip-system' "
         "name='gz::sim::systems::WheelSlip'>" +
         wheel_params("wheel_front", compliance, compliance, 77) +
         wheel_params("wheel_rear_left", compliance, compliance, 32) +
         wheel_params("wheel_rear_right", compliance, compliance, 32) + "</plugin></model>";
}

std::string world(const std::string& models, const std::string& gravity) {
  return "<?xml version='1.0'?><sdf version='1.9'><world name='w'>"
         "<physics type='ode'><max_step_size>0.001</max_step_size></physics>"
         "<gravity>" +
         gravity +
         "</gravity><model name='ground'><static>true</static><link name='l'>"
         "<collision name='c'><geometry><plane><normal>0 0 1</normal></plane></geometry>"
         "</collision></link></model>" +
         models + "</world></sdf>";
}

void spin(LoadedWorld& w, const std::string& joint) {
  w.r().add<c::JointVelocityCmd>(w.find(joint), c::JointVelocityCmd{{kSpin}});
}

// gz-sim's TricyclesUphill: gravity (−2, 0, −9.8), both cycles' rear wheels at 6 rad/s for 2 s.
// The cycle without slip climbs at the wheels' rim speed r·ω (0.9 m/s); the one with compliance
// 1 slips by r·ω × (m/2)·|g_x| / 32 N, each rear wheel carrying half the cycle's weight along the
// slope at a slip of r·ω / 32 N per N (gz-sim's tolerance 5e-3 m/s, and its wheel speeds within
// 3e-3 rad/s).
TEST(WheelSlip, TricyclesUphillSlipAsTheirComplianceSays) {
  LoadedWorld w(world(trisphere("cycle0", 0, 0) + trisphere("cycle1", 3, 1), "-2 0 -9.8"));
  for (const char* m : {"cycle0", "cycle1"}) {
    for (const char* j : {"wheel_rear_left_spin", "wheel_rear_right_spin"}) {
      spin(w, std::string("w::") + m + "::" + j);
    }
  }
  w.step(2000);
  const double no_slip = kRadius * kSpin;
  const double force_ratio = (kCycleMass / 2) * 2.0 / 32;
  double v[2];
  for (int k = 0; k < 2; ++k) {
    const std::string m = k == 0 ? "w::cycle0::" : "w::cycle1::";
    for (const char* j : {"wheel_rear_left_spin", "wheel_rear_right_spin"}) {
      EXPECT_NEAR(w.r().get<c::JointVelocity>(w.find(m + j)).data[0], kSpin, 3e-3) << m << j;
    }
    v[k] = w.r().get<c::WorldLinearVelocity>(w.find(m + "frame")).value.X();
  }
  EXPECT_NEAR(no_slip - v[0], 0.0, 5e-3);
  EXPECT_NEAR(no_slip - v[1], no_slip * force_ratio, 5e-3);
  // Beyond gz-sim's tolerance: what the slip adds, against MuJoCo's own softness in cycle 0.
  EXPECT_NEAR(v[0] - v[1], no_slip * force_ratio, 0.01 * no_slip * force_ratio);
}

// A four-wheeled cart driving along x on a side slope (g_y = −1): its wheels' first friction
// direction is their axle (<fdir1>), so WheelSlip's lateral compliance C makes every wheel creep
// sideways at s·f, s = C·r·|ω| / N, f a quarter of m·|g_y| (within 1 % of the cart without
// slip, whose own contact softness creeps 1 % of that); the longitudinal compliance (0) leaves
// the rolling speed r·ω. A WheelSlipCmd then changes C; a reset runs as a
// fresh start.
std::string cart(double lateral, double longitudinal) {
  std::string wheels, params;
  for (const auto& [name, x, y] : {std::tuple{"fl", 0.5, 0.4}, std::tuple{"fr", 0.5, -0.4},
                                   std::tuple{"rl", -0.5, 0.4}, std::tuple{"rr", -0.5, -0.4}}) {
    wheels += wheel(name, x, y, true);
    params += wheel_params(name, lateral, longitudinal, 50);
  }
  return "<model name='cart'><link name='frame'><pose>0 0 0.3 0 0 0</pose>" +
         inertial(kFrameMass, 0.3) + "</link>" + wheels +
         "<plugin filename='gz-sim-wheel-slip-system' name='gz::sim::systems::WheelSlip'>" +
         params + "</plugin></model>";
}
constexpr double kCartMass = kFrameMass + 4 * 0.5;

struct Creep {
  double along = 0, across = 0;
};
Creep drive(LoadedWorld& w, int steps) {
  w.step(steps);
  // In the cart's own frame: a yaw of 1e-3 rad would turn 1e-3 of its speed into "across".
  const auto v = w.r().get<c::LinearVelocity>(w.find("w::cart::frame")).value;
  return {v.X(), v.Y()};
}
void spin_all(LoadedWorld& w) {
  for (const char* j : {"fl_spin", "fr_spin", "rl_spin", "rr_spin"}) {
    spin(w, std::string("w::cart::") + j);
  }
}

TEST(WheelSlip, LateralSlipAsItsComplianceSays) {
  const double C = 0.5, N = 50, g_y = 1.0;
  const double s = C * kRadius * kSpin / N;
  const double expected = s * kCartMass * g_y / 4;
  LoadedWorld stiff(world(cart(0, 0), "0 -1 -9.8"));
  spin_all(stiff);
  const Creep plain = drive(stiff, 3000);
  LoadedWorld w(world(cart(C, 0), "0 -1 -9.8"));
  spin_all(w);
  const Creep creep = drive(w, 3000);
  EXPECT_NEAR(plain.across - creep.across, expected, 0.01 * expected);
  // Rolling at r·ω, less MuJoCo's soft contact depth (deeper in the elliptic cone slip uses).
  EXPECT_NEAR(creep.along, kRadius * kSpin, 2e-3);
  EXPECT_NEAR(plain.along, kRadius * kSpin, 1e-3);

  // The command halves C: the creep halves.
  for (const char* link : {"fl", "fr", "rl", "rr"}) {
    w.r().add<c::WheelSlipCmd>(w.find(std::string("w::cart::") + link),
                               c::WheelSlipCmd{C / 2, 0});
  }
  const Creep halved = drive(w, 3000);
  EXPECT_NEAR(creep.across - halved.across, -expected / 2, 0.01 * expected);
  EXPECT_EQ(w.r().get<c::WheelSlipCompliance>(w.find("w::cart::fl")).lateral, C / 2);
  EXPECT_FALSE(w.r().has<c::WheelSlipCmd>(w.find("w::cart::fl")));

  // Reset: the configured compliance, and the run a fresh start gives.
  w.runner->reset_now();
  spin_all(w);
  LoadedWorld fresh(world(cart(C, 0), "0 -1 -9.8"));
  spin_all(fresh);
  const Creep again = drive(w, 3000), first = drive(fresh, 3000);
  EXPECT_EQ(again.across, first.across);
  EXPECT_EQ(again.along, first.along);
}

// The slip WheelSlip gives a wheel: r·|ω| / N × C on its collision, none in the first step (as
// Gazebo's first PreUpdate), none while paused.
TEST(WheelSlip, SlipComplianceFollowsTheRimSpeed) {
  LoadedWorld w(world(cart(0.4, 0.2), "0 0 -9.8"));
  const ecs::Entity col = w.find("w::cart::fl::collision");
  w.step(1);
  EXPECT_FALSE(w.r().has<c::SlipComplianceCmd>(col));
  spin_all(w);
  w.step(500);
  const double omega = std::abs(w.r().get<c::JointVelocity>(w.find("w::cart::fl_spin")).data[0]);
  w.step(1);
  const auto& slip = w.r().get<c::SlipComplianceCmd>(col);
  EXPECT_NEAR(slip.slip1, 0.4 * kRadius * omega / 50, 1e-9);
  EXPECT_NEAR(slip.slip2, 0.2 * kRadius * omega / 50, 1e-9);
}

std::string bad(const std::string& wheel_xml, const std::string& extra_link = "") {
  return world("<model name='cart'><link name='frame'>" + inertial(1, 0.1) + "</link>" +
                   wheel("fl", 0.5, 0.4, false) + extra_link +
                   "<plugin filename='gz-sim-wheel-slip-system' "
                   "name='gz::sim::systems::WheelSlip'>" +
                   wheel_xml + "</plugin></model>",
               "0 0 -9.8");
}

TEST(WheelSlip, BadParametersAreErrorsAtTheirLine) {
  using testing::load_error;
  EXPECT_NE(load_error(bad("")).find("WheelSlip: no <wheel link_name='...'> given"),
            std::string::npos);
  EXPECT_NE(load_error(bad(wheel_params("nope", 0, 0, 10))).find("no such link"),
            std::string::npos);
  EXPECT_NE(load_error(bad(wheel_params("fl", -1, 0, 10))).find("must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(load_error(bad(wheel_params("fl", 0, 0, 0))).find("wheel_normal_force"),
            std::string::npos);
  EXPECT_NE(load_error(bad("<wheel link_name='fl'><wheel_normal_force>1</wheel_normal_force>"
                           "</wheel>"))
                .find("wheel_radius"),
            std::string::npos);
  EXPECT_NE(load_error(bad("<wheel link_name='fl'><wheel_normal_force>1</wheel_normal_force>"
                           "<wheel_radius>1</wheel_radius><slip_compliance>1</slip_compliance>"
                           "</wheel>"))
                .find("slip_compliance"),
            std::string::npos);
  // A wheel of two collisions: which one slips?
  const std::string two = bad(wheel_params("fl", 0, 0, 10));
  std::string twice = two;
  twice.replace(twice.rfind("</collision>"),
                12,
                "</collision><collision name='c2'><geometry><sphere><radius>0.1</radius>"
                "</sphere></geometry></collision>");
  EXPECT_NE(load_error(twice).find("has 2 collisions"), std::string::npos) << load_error(twice);
}

// LookupWheelSlip: a 4 × 4 slip map over 4 m × 4 m centred on the origin. gz-sim's pixel under
// a wheel at x is column round((x + 2) · 4 / 4): the front wheels (x = 0.5) read column 3, whose
// pixels are R 148, G 108, B 126 — lateral C + 20 × 0.05, longitudinal C − 20 × 0.005 (not below
// 0), friction μ − 2 × 0.5 (not below 0) — and the rear wheels (x = −0.5) column 2, 128 each
// (nominal).
TEST(LookupWheelSlip, TheMapUnderTheWheelSetsItsSlipAndFriction) {
  const std::string png = (std::filesystem::temp_directory_path() /
                           ("kestrel_slip_map_" + std::to_string(::getpid()) + ".png"))
                              .string();
  image::Rgb8 map;
  map.width = map.height = 4;
  for (int v = 0; v < 4; ++v) {
    for (int u = 0; u < 4; ++u) {
      if (u == 3) {
        map.data.insert(map.data.end(), {148, 108, 126});
      } else {
        map.data.insert(map.data.end(), {128, 128, 128});
      }
    }
  }
  image::write_png(png, map);
  std::string model = cart(0.1, 0.05);
  model.insert(model.rfind("</model>"),
               "<plugin filename='gz-sim-lookup-wheel-slip-system' "
               "name='gz::sim::systems::LookupWheelSlip'><slip_map>" +
                   png +
                   "</slip_map><size_x>4</size_x><size_y>4</size_y>"
                   "<wheel_link_name>fl</wheel_link_name>"
                   "<wheel_link_name>rl</wheel_link_name></plugin>");
  LoadedWorld w(world(model, "0 0 -9.8"));
  w.step(3);
  const auto& fl = w.r().get<c::WheelSlipCompliance>(w.find("w::cart::fl"));
  EXPECT_NEAR(fl.lateral, 0.1 + 20 * 0.05, 1e-12);
  EXPECT_EQ(fl.longitudinal, 0.0);
  const auto& rl = w.r().get<c::WheelSlipCompliance>(w.find("w::cart::rl"));
  EXPECT_NEAR(rl.lateral, 0.1, 1e-12);
  EXPECT_NEAR(rl.longitudinal, 0.05, 1e-12);
  const auto& friction = w.r().get<c::ContactFrictionCmd>(w.find("w::cart::fl::collision"));
  EXPECT_EQ(friction.mu, 0.0);  // 1 − 2 × 0.5
  EXPECT_EQ(friction.mu2, 0.0);
  EXPECT_EQ(w.r().get<c::ContactFrictionCmd>(w.find("w::cart::rl::collision")).mu, 1.0);
  // A map that is not an image: an error naming it.
  std::filesystem::remove(png);
  EXPECT_NE(testing::load_error(world(model, "0 0 -9.8")).find(png), std::string::npos);
}

}  // namespace
}  // namespace kestrel::systems
