// FixedWingControl + FixedWingMission flying worlds/fixed_wing_mission.sdf: altitude and airspeed
// held on the circuit legs, the track followed, the landing on the runway; refused parameters.

#include "kestrel/components/fixed_wing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/core/error.h"
#include "kestrel/sim/events.h"
#include "kestrel/systems/mission_monitor.h"
#include "testing/quad_world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

std::string demo_text(const std::string& world = "fixed_wing_mission") {
  std::ifstream in(std::string(KESTREL_SOURCE_DIR) + "/worlds/" + world + ".sdf");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The demo world with `from` replaced by `to` (each must occur once).
std::string demo_with(const std::string& from, const std::string& to,
                      const std::string& world = "fixed_wing_mission") {
  std::string s = demo_text(world);
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The circuit of the demo world (its <waypoint>s) and what the test holds it to.
const std::vector<Vector3d> kCircuit = {
    {220, 0, 25}, {220, 100, 25}, {-220, 100, 25}, {-220, 0, 25}};
constexpr double kAltitudeTolerance = 1.0;  // [m] on the circuit legs
constexpr double kAirspeedTolerance = 0.5;  // [m/s] about 12 m/s on the circuit legs
constexpr double kCrossTrackLimit = 2.5;    // [m], MissionState's max tracking error
constexpr double kLegSettle = 40.0;         // legs are judged from 40 m after their start...
constexpr double kLegEnd = 20.0;            // ...to 20 m before their end [m]

struct Flight {
  double worst_altitude = 0, worst_airspeed = 0;  // largest deviations on the legs
  int leg_samples = 0;
  double max_height = 0;
  double touchdown_sink = -1;  // vertical speed when the wheels first touch again [m/s]
  Vector3d final_position, final_velocity;
  double final_tilt = 0;
  std::string phase, reason;
  double transition_altitude = 0;  // VTOL: largest |z − 25 m| from the transition to the legs
  double leg_lift_rotors = 0;      // VTOL: largest lift-rotor command on the legs [rad/s]
  double max_tracking_error = 0, flight_time = 0;
  int exit_code = -1;
};

Flight fly(const std::string& sdf, const std::string& model = "fixed_wing_mission::plane") {
  testing::LoadedWorld w(sdf);
  auto& r = w.r();
  const ecs::Entity plane = w.find(model);
  const ecs::Entity body = w.find(model + "::base_link");
  const auto monitor = MissionMonitor::attach(*w.runner);
  EXPECT_NE(monitor, nullptr);
  Flight f;
  auto sub = w.runner->events().subscribe<sim::StepDone>([&](const sim::StepDone&) {
    const auto& st = r.get<c::MissionState>(plane);
    const Vector3d p = r.get<c::WorldPose>(body).value.Pos();
    const Vector3d v = r.get<c::WorldLinearVelocity>(body).value;
    f.max_height = std::max(f.max_height, p.Z());
    // Back on the wheels (the start height, 0.16 m, plus 1 cm) after having flown.
    if (f.max_height > 5 && f.touchdown_sink < 0 && p.Z() < 0.17) f.touchdown_sink = -v.Z();
    // VTOL: from the end of the climb (24.7 m) to the first leg.
    if (st.phase == c::MissionPhase::kTakeoff && f.max_height > 24.7) {
      f.transition_altitude = std::max(f.transition_altitude, std::abs(p.Z() - 25));
    }
    if (st.phase == c::MissionPhase::kWaypoint && st.waypoint == 0 && p.X() < 150) {
      f.transition_altitude = std::max(f.transition_altitude, std::abs(p.Z() - 25));
    }
    if (st.phase != c::MissionPhase::kWaypoint || st.waypoint < 1) return;
    const Vector3d a = kCircuit[static_cast<std::size_t>(st.waypoint) - 1];
    const Vector3d b = kCircuit[static_cast<std::size_t>(st.waypoint)];
    Vector3d d = b - a;
    d.Z(0);
    const double len = d.Length();
    const double along = (p - a).Dot(d / len);
    if (along < kLegSettle || along > len - kLegEnd) return;
    ++f.leg_samples;
    if (const auto* a = r.try_get<c::ActuatorCommands>(plane)) {
      for (std::size_t i = 0; i < std::min<std::size_t>(4, a->velocity.size()); ++i) {
        f.leg_lift_rotors = std::max(f.leg_lift_rotors, a->velocity[i]);
      }
    }
    f.worst_altitude = std::max(f.worst_altitude, std::abs(p.Z() - 25));
    f.worst_airspeed = std::max(f.worst_airspeed, std::abs(v.Length() - 12));  // no wind
  });
  w.runner->run(std::nullopt, from_seconds(300));
  const auto& st = r.get<c::MissionState>(plane);
  f.phase = c::mission_phase_name(st.phase);
  f.reason = st.reason;
  f.max_tracking_error = st.max_tracking_error;
  f.flight_time = st.flight_time;
  const auto& X = r.get<c::WorldPose>(body).value;
  f.final_position = X.Pos();
  f.final_velocity = r.get<c::WorldLinearVelocity>(body).value;
  f.final_tilt = std::acos(X.Rot().RotateVector(Vector3d::UnitZ).Z());
  f.exit_code = monitor ? monitor->exit_code() : -1;
  return f;
}

TEST(FixedWingMissionWorld, FliesTheCircuitAndLandsOnTheRunway) {
  const Flight f = fly(demo_text());
  std::printf(
      "fixed_wing_mission: %s, flight %.1f s, max cross-track %.2f m, worst altitude error "
      "%.2f m, worst airspeed error %.2f m/s over %d samples, touchdown at %.2f m/s down, "
      "stopped at %.1f %.1f\n",
      f.phase.c_str(), f.flight_time, f.max_tracking_error, f.worst_altitude, f.worst_airspeed,
      f.leg_samples, f.touchdown_sink, f.final_position.X(), f.final_position.Y());
  EXPECT_EQ(f.phase, "completed") << f.reason;
  EXPECT_EQ(f.exit_code, 0);
  // The circuit legs: 25 m ± 1 m at 12 ± 0.5 m/s, on the track within 2.5 m.
  EXPECT_GT(f.leg_samples, 20000);  // the four legs are flown (20 s of 1 ms steps)
  EXPECT_LE(f.worst_altitude, kAltitudeTolerance);
  EXPECT_LE(f.worst_airspeed, kAirspeedTolerance);
  EXPECT_LE(f.max_tracking_error, kCrossTrackLimit);
  EXPECT_GT(f.max_height, 24);
  // A flared landing: below 1 m/s vertical speed at touchdown (measured 0.6 m/s).
  EXPECT_GT(f.touchdown_sink, 0);
  EXPECT_LT(f.touchdown_sink, 1.0);
  // Stopped on the runway (x from -30 to 270 m, |y| <= 6 m), on its wheels, level.
  EXPECT_GT(f.final_position.X(), -30);
  EXPECT_LT(f.final_position.X(), 270);
  EXPECT_LT(std::abs(f.final_position.Y()), 6);
  EXPECT_LT(f.final_position.Z(), 0.25);
  EXPECT_LT(f.final_velocity.Length(), 0.2);
  EXPECT_LT(f.final_tilt, 0.15);
}

TEST(FixedWingMissionWorld, LeavingTheRunwayInTheRollOutFailsTheMission) {
  // The runway (a quarter of its length before the touchdown point, three quarters beyond)
  // only 8 m long: the roll-out leaves it.
  const Flight f = fly(demo_with("runway_length=\"300\"", "runway_length=\"8\""));
  EXPECT_EQ(f.phase, "failed");
  EXPECT_THAT(f.reason, ::testing::HasSubstr("off the runway"));
  EXPECT_EQ(f.exit_code, 1);
}

TEST(VtolMissionWorld, TakesOffVerticallyFliesTheCircuitWingBorneAndLandsVertically) {
  const Flight f = fly(demo_text("vtol_mission"), "vtol_mission::vtol");
  std::printf(
      "vtol_mission: %s, flight %.1f s, transition within %.2f m of 25 m, max cross-track %.2f m, "
      "worst altitude error %.2f m, worst airspeed error %.2f m/s over %d samples, lift rotors "
      "on the legs %.1f rad/s, landed at %.2f %.2f\n",
      f.phase.c_str(), f.flight_time, f.transition_altitude, f.max_tracking_error, f.worst_altitude,
      f.worst_airspeed, f.leg_samples, f.leg_lift_rotors, f.final_position.X(),
      f.final_position.Y());
  EXPECT_EQ(f.phase, "completed") << f.reason;
  EXPECT_EQ(f.exit_code, 0);
  // The transition holds the height within 2 m (measured 1.2 m).
  EXPECT_GT(f.max_height, 24.7);
  EXPECT_LE(f.transition_altitude, 2.0);
  // Wing-borne on the legs: lift rotors off, 25 m ± 1 m at 12 ± 0.5 m/s, on the track within
  // 2.5 m.
  EXPECT_GT(f.leg_samples, 20000);
  EXPECT_EQ(f.leg_lift_rotors, 0.0);
  EXPECT_LE(f.worst_altitude, kAltitudeTolerance);
  EXPECT_LE(f.worst_airspeed, kAirspeedTolerance);
  EXPECT_LE(f.max_tracking_error, kCrossTrackLimit);
  // Landed vertically on the point (0, 0) within 0.5 m, on its wheels, level and still.
  EXPECT_LT(std::hypot(f.final_position.X(), f.final_position.Y()), 0.5);
  EXPECT_LT(f.final_position.Z(), 0.25);
  EXPECT_LT(f.final_velocity.Length(), 0.1);
  EXPECT_LT(f.final_tilt, 0.1);
}

TEST(FixedWingControl, RefusedParameters) {
  using testing::load_error;
  {
    // Found at the first step (the model's JointPositionControllers may be configured later).
    testing::LoadedWorld w(demo_with("<servo_topic>/model/plane/servo</servo_topic>",
                                     "<servo_topic>/model/plane/servos</servo_topic>"));
    try {
      w.step();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("no JointPositionController"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("/model/plane/servos"));
    }
  }
  EXPECT_THAT(load_error(demo_with("<rudder>3</rudder>", "<rudder>2</rudder>")),
              ::testing::HasSubstr("share one actuator"));
  EXPECT_THAT(load_error(demo_with("<rudder>3</rudder>", "<rudder>3</rudder><rudr>1</rudr>")),
              ::testing::HasSubstr("rudr"));
  EXPECT_THAT(load_error(demo_with("<brake_joint>left_wheel_joint</brake_joint>",
                                   "<brake_joint>left_wheel</brake_joint>")),
              ::testing::HasSubstr("left_wheel"));
  EXPECT_THAT(load_error(demo_with("<max_rotor_velocity>1000</max_rotor_velocity>", "")),
              ::testing::HasSubstr("max_rotor_velocity"));
  EXPECT_THAT(load_error(demo_with("<motor_actuator>0</motor_actuator>", "")),
              ::testing::HasSubstr("exactly one of <motor_actuator>"));
  EXPECT_THAT(load_error(demo_with("<blend_airspeed_end>11</blend_airspeed_end>",
                                   "<blend_airspeed_end>6</blend_airspeed_end>", "vtol_mission")),
              ::testing::HasSubstr("blend_airspeed_end"));
  EXPECT_THAT(
      load_error(demo_with("<blend_airspeed_start>7</blend_airspeed_start>", "", "vtol_mission")),
      ::testing::HasSubstr("blend_airspeed_start"));
  EXPECT_THAT(
      load_error(demo_with("<transition_airspeed>11</transition_airspeed>", "", "vtol_mission")),
      ::testing::HasSubstr("transition_airspeed"));
}

TEST(FixedWingMission, RefusedItems) {
  using testing::load_error;
  EXPECT_THAT(load_error(demo_with("glide_slope=\"0.1\"", "glide_slope=\"0.7\"")),
              ::testing::HasSubstr("glide_slope"));
  EXPECT_THAT(load_error(demo_with("flare_height=\"1.5\"", "flare_hight=\"1.5\"")),
              ::testing::HasSubstr("flare_hight"));
  EXPECT_THAT(load_error(demo_with("<takeoff altitude=\"25\"/>", "")),
              ::testing::HasSubstr("first item must be <takeoff"));
  EXPECT_THAT(load_error(demo_with("<rotate_speed>9</rotate_speed>", "")),
              ::testing::HasSubstr("rotate_speed"));
  EXPECT_THAT(load_error(demo_with("<waypoint>220 0 25</waypoint>",
                                   "<waypoint>220 0 25</waypoint><takeoff altitude=\"3\"/>")),
              ::testing::HasSubstr("only <waypoint>s between"));
}

}  // namespace
}  // namespace kestrel::systems
