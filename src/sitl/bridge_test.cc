// The PX4, ArduPilot and RflySim bridges against in-process peers on loopback (ctest runs them in a
// private network namespace). No physics: the vehicle's state is written by the test.

#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/pacing.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/sitl.h"
#include "kestrel/components/world.h"
#include "kestrel/sensors/environment.h"
#include "kestrel/sim/runner.h"
#include "kestrel/sim/stop_signal.h"
#include "kestrel/sitl/sitl.h"
#include "kestrel/world/builtin.h"
#include "kestrel/world/setup.h"
#include "sensors/common/sensor_system.h"
#include "sitl/actuator_map.h"
#include "sitl/ardupilot_packet.h"
#include "sitl/fake_peers.h"
#include "sitl/frames.h"
#include "sitl/mavlink/codec.h"
#include "sitl/net.h"
#include "sitl/rflysim/packet.h"
#include "sitl/vehicle.h"

namespace kestrel::sitl {
namespace {

namespace c = components;
namespace mav = mavlink;
using ignition::math::Pose3d;
using peers::connect_tcp;
using peers::FakeArduPilot;
using peers::FakePx4;

// The world of a test: geodetic origin and the vehicle's (fixed) state.
struct WorldSpec {
  bool spherical = true;  // false: no <spherical_coordinates>
  double latitude_deg = 47.397742, longitude_deg = 8.545594, elevation = 488.0, heading_deg = 0;
  Pose3d X_WB{0, 0, 10, 0, 0, M_PI / 2};     // hovering 10 m up, yawed to face north
  ignition::math::Vector3d v_WB_W{0, 2, 0};  // 2 m/s north
};

// A world with one model "quad" and its link "base_link" in the state of `spec`.
std::unique_ptr<sim::Runner> make_world(const WorldSpec& spec = {}) {
  sim::Runner::Options o;
  o.world_name = "w";
  o.real_time_factor = 0;
  auto r = std::make_unique<sim::Runner>(o);
  auto& reg = r->registry();
  reg.add<c::Gravity>(r->world());
  reg.add<c::MagneticField>(r->world());
  reg.add<c::Atmosphere>(r->world());
  if (spec.spherical) {
    reg.add<c::SphericalCoordinates>(
        r->world(), c::SphericalCoordinates{"EARTH_WGS84", "ENU", spec.latitude_deg,
                                            spec.longitude_deg, spec.elevation, spec.heading_deg});
  }
  const auto model = reg.create(r->world());
  reg.add<c::Name>(model, c::Name{"quad"});
  reg.add<c::Model>(model);
  reg.add<c::Pose>(model, c::Pose{spec.X_WB});
  const auto link = reg.create(model);
  reg.add<c::Name>(link, c::Name{"base_link"});
  reg.add<c::Link>(link);
  reg.add<c::Pose>(link);
  reg.add<c::WorldPose>(link, c::WorldPose{spec.X_WB});
  reg.add<c::WorldLinearVelocity>(link, c::WorldLinearVelocity{spec.v_WB_W});
  reg.add<c::AngularVelocity>(link, c::AngularVelocity{{0, 0, 0.5}});  // yawing left
  reg.add<c::LinearAcceleration>(link);
  return r;
}

// Attaches a bridge to the model "quad" with plugin parameters `params`, then configures.
void attach(sim::Runner& r, Autopilot which, const std::string& params) {
  const auto model = r.registry().child_by_name(r.world(), "quad");
  const bool px4 = which == Autopilot::kPx4;
  r.add_system(px4 ? make_px4_bridge_system() : make_ardupilot_bridge_system(), model,
               Element::parse("<plugin>" + params + "</plugin>"),
               px4 ? "kestrel::systems::Px4Bridge" : "kestrel::systems::ArduPilotBridge", "test");
  r.configure();
}

double rotor(sim::Runner& r, std::size_t i) {
  const auto model = r.registry().child_by_name(r.world(), "quad");
  const auto& v = r.registry().get<c::ActuatorCommands>(model).velocity;
  return i < v.size() ? v[i] : -1;
}

// Steps until the peer answers (lockstep on), then `steps` more: in lockstep the peer has read
// everything sent before each HIL_SENSOR it answered.
void fly(sim::Runner& r, int steps) {
  for (int i = 0; i < 20000 && rotor(r, 0) <= 0; ++i) r.step_once();
  ASSERT_GT(rotor(r, 0), 0) << "PX4 never answered";
  for (int i = 0; i < steps; ++i) r.step_once();
}

// Meridian radius of curvature of WGS84 at a latitude [m].
double meridian_radius(double latitude_deg) {
  constexpr double kA = 6378137.0, kE2 = 6.69437999014e-3;
  const double s = std::sin(latitude_deg * M_PI / 180.0);
  return kA * (1 - kE2) / std::pow(1 - kE2 * s * s, 1.5);
}

// A PX4 bridge with `params`: by default lockstep without wall-clock limits (the world waits for
// the fake as long as it takes, as on a loaded CI machine); <answer_timeout> where the test is
// about running on.
std::unique_ptr<sim::Runner> px4_world(int instance, const std::string& params = "",
                                       const WorldSpec& spec = {}) {
  auto r = make_world(spec);
  attach(*r, Autopilot::kPx4, "<instance>" + std::to_string(instance) + "</instance>" + params);
  return r;
}

TEST(Px4Bridge, LockstepAnswersDriveTheRotorsDeterministically) {
  auto r = px4_world(11);
  FakePx4 px4(4560 + 11);
  // Before PX4 answers for the first time (it boots) the world does not wait; step until it has.
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  ASSERT_GT(rotor(*r, 0), 0) << "PX4 never answered";
  // From now on every step after a HIL_SENSOR sees that message's answer: the command is the
  // time of the last sensor message in ms (mod 1000) / 1000 × 1000 rad/s — whatever the
  // wall-clock timing.
  for (int i = 0; i < 400; ++i) {
    r->step_once();
    const auto t_ns = r->info().sim_time.count();  // = end of the step just run
    // The last HIL_SENSOR was sent at the latest multiple of 4 ms ≤ the start of this step.
    if (i < 5) continue;  // messages sent before lockstep began were not waited for
    const std::int64_t start = t_ns - 1'000'000;
    const std::int64_t sensor_ns = (start / 4'000'000) * 4'000'000;
    ASSERT_NEAR(rotor(*r, 0), static_cast<double>(sensor_ns / 1'000'000 % 1000), 1e-3)
        << "step " << i;
    ASSERT_EQ(rotor(*r, 1), 0.0);  // NaN from the peer became 0
  }
}

TEST(Px4Bridge, SendsSensorsInNedFrdWithPx4Units) {
  auto r = px4_world(12);
  FakePx4 px4(4560 + 12);
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  // In lockstep the peer has read everything sent before each HIL_SENSOR it answered.
  for (int i = 0; i < 300; ++i) r->step_once();
  std::lock_guard lock(px4.m);
  ASSERT_GT(px4.gpss, 0);
  const auto& s = px4.sensor;
  // Hovering still (no acceleration): specific force is −g along FRD z.
  EXPECT_NEAR(s.zacc, -9.8, 1e-5);
  EXPECT_NEAR(s.xacc, 0, 1e-6);
  // Yawing left at 0.5 rad/s (FLU +z) is −0.5 rad/s about FRD z.
  EXPECT_NEAR(s.zgyro, -0.5, 1e-6);
  // Facing north: FRD is NED. The field is the WMM's at the vehicle (north along body x, east
  // to the right, down along +z), in gauss; Px4Bridge.StandInMagnetometerIsTheWmm checks the
  // model against NOAA's published values.
  const auto b = sensors::wmm_model(47.397742, 8.545594, 498.0).enu() * 1e4;
  EXPECT_NEAR(s.xmag, b.Y(), 1e-6);
  EXPECT_NEAR(s.ymag, b.X(), 1e-6);
  EXPECT_NEAR(s.zmag, -b.Z(), 1e-6);
  // 10 m above a 488 m origin in the standard atmosphere.
  EXPECT_NEAR(s.abs_pressure, 1013.25 * std::pow(1 - 0.0065 * 498 / 288.15, 5.2559), 0.05);
  EXPECT_NEAR(s.pressure_alt, 498.0, 0.05);
  EXPECT_NEAR(s.temperature, 15.0 - 0.0065 * 498, 1e-3);
  EXPECT_EQ(s.fields_updated & 0x1FFF, 0x1FFFu & ~1024u);  // all but diff_pressure
  EXPECT_EQ(s.time_usec % 4000, 0u);                       // 250 Hz on sim time
  const auto& g = px4.gps;
  EXPECT_EQ(g.fix_type, 3);
  EXPECT_GE(g.satellites_visible, 10);
  EXPECT_NEAR(g.lat, 473977420, 2);
  EXPECT_NEAR(g.lon, 85455940, 2);
  EXPECT_NEAR(g.alt, 498000, 1);
  EXPECT_EQ(g.vn, 200);  // 2 m/s north in cm/s
  EXPECT_EQ(g.ve, 0);
  EXPECT_EQ(g.vel, 200);
  EXPECT_EQ(g.cog, 0);
  EXPECT_GE(g.eph, 30);
  EXPECT_LE(g.eph, 100);
  const auto& q = px4.state;
  // Facing north, level: the NED attitude is the identity.
  EXPECT_NEAR(std::abs(q.attitude_quaternion[0]), 1.0, 1e-6);
  EXPECT_EQ(q.vx, 200);
  EXPECT_NEAR(q.yawspeed, -0.5, 1e-6);
  EXPECT_NEAR(q.zacc, -999, 1);  // mG: −9.8 / 9.80665
}

// PX4's px4::AirSpeed plugin (src/systems/px4_airspeed) on the base link, as advanced_plane
// declares it: HIL_SENSOR's diff_pressure is ½ρu² of the airspeed along the body x axis in hPa
// (ρ of PX4's troposphere at 488 m + z), with the plugin's 0.01 hPa noise, flagged new in
// every message.
TEST(Px4Bridge, Px4AirSpeedPluginIsSentAsHilSensorDiffPressure) {
  WorldSpec spec;
  spec.v_WB_W = {0, 20, 0};  // 20 m/s north, facing north: u = 20 m/s
  auto r = make_world(spec);
  const auto model = r->registry().child_by_name(r->world(), "quad");
  const auto builtins = world::builtin_systems();
  const auto it = std::find_if(builtins.begin(), builtins.end(),
                               [](const auto& b) { return b.name == "Px4AirSpeed"; });
  ASSERT_NE(it, builtins.end());
  r->add_system(it->make(), model,
                Element::parse("<plugin><link_name>base_link</link_name></plugin>"),
                "px4::AirSpeed", "test");
  attach(*r, Autopilot::kPx4, "<instance>41</instance>");
  FakePx4 px4(4560 + 41);
  px4.keep_log = true;
  fly(*r, 2000);
  std::lock_guard lock(px4.m);
  const double rho = 1.225 / std::pow(288.15 / (288.15 - 0.0065 * (488 + 10)), 4.256);
  const double q_hpa = 0.5 * rho * 20 * 20 / 100;
  double sum = 0, sum2 = 0;
  int n = 0;
  for (const auto& s : px4.sensor_log) {
    ASSERT_TRUE(s.fields_updated & 1024u) << "diff_pressure not flagged new at " << s.time_usec;
    sum += s.diff_pressure;
    sum2 += static_cast<double>(s.diff_pressure) * s.diff_pressure;
    ++n;
  }
  ASSERT_GT(n, 400);
  const double mean = sum / n;
  EXPECT_NEAR(mean, q_hpa, 4 * 0.01 / std::sqrt(n)) << n << " messages";
  EXPECT_NEAR(std::sqrt(sum2 / n - mean * mean), 0.01, 0.0015);
}

TEST(Px4Bridge, StandInMagnetometerIsTheWmmAtTheVehicle) {
  // NOAA's published WMM2025 check value at 2025.0: 3 km above the ellipsoid at 50° S 103° W,
  // X (north) 19526.532799 nT, Y (east) 10362.990980 nT, Z (down) −31437.562789 nT. The world's
  // <magnetic_field> (SDF's default, Zurich-like) disagrees: a one-line note, the WMM wins.
  WorldSpec spec;
  spec.latitude_deg = -50, spec.longitude_deg = -103, spec.elevation = 3000 - 10;
  testing::internal::CaptureStderr();
  auto r = px4_world(17, "", spec);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the world's <magnetic_field> (5.56e-06 2.29e-05 -4.24e-05 T) differs by "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("the magnetometer stand-in uses the WMM"), std::string::npos) << err;
  FakePx4 px4(4560 + 17);
  fly(*r, 20);
  std::lock_guard lock(px4.m);
  // Facing north, level: FRD is NED. Gauss = 1e5 nT; the model is within 1 nT of NOAA's.
  EXPECT_NEAR(px4.sensor.xmag, 19526.532799e-5, 2e-5);
  EXPECT_NEAR(px4.sensor.ymag, 10362.990980e-5, 2e-5);
  EXPECT_NEAR(px4.sensor.zmag, -31437.562789e-5, 2e-5);
}

TEST(Px4Bridge, WithoutSphericalCoordinatesTheWorldsFieldIsUsed) {
  WorldSpec spec;
  spec.spherical = false;
  testing::internal::CaptureStderr();
  auto r = px4_world(18, "", spec);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("<magnetic_field>"), std::string::npos) << err;
  FakePx4 px4(4560 + 18);
  fly(*r, 20);
  std::lock_guard lock(px4.m);
  // Facing north: the field's north component (22.8758 µT) is along body x; up is −z; gauss.
  EXPECT_NEAR(px4.sensor.xmag, 0.228758, 1e-6);
  EXPECT_NEAR(px4.sensor.ymag, 0.055645, 1e-6);  // east is to the right (FRD +y)
  EXPECT_NEAR(px4.sensor.zmag, 0.423884, 1e-6);  // field points down: FRD +z
}

TEST(Px4Bridge, WorldHeadingIsRotatedIntoNed) {
  // Heading 90°: the world's +x axis points south (SDF: heading from north towards east). The
  // vehicle sits 100 m along +x facing +x (yaw 0) and moves along +x at 2 m/s: it is 100 m
  // south of the origin, faces south and moves south.
  WorldSpec spec;
  spec.heading_deg = 90;
  spec.X_WB = Pose3d(100, 0, 10, 0, 0, 0);
  spec.v_WB_W = {2, 0, 0};
  auto r = px4_world(19, "", spec);
  FakePx4 px4(4560 + 19);
  fly(*r, 300);
  std::lock_guard lock(px4.m);
  ASSERT_GT(px4.gpss, 0);
  const double lat = spec.latitude_deg - 100.0 / meridian_radius(spec.latitude_deg) * 180 / M_PI;
  const auto& q = px4.state;
  EXPECT_EQ(q.vx, -200);  // cm/s north
  EXPECT_EQ(q.vy, 0);     // east
  EXPECT_NEAR(q.lat, lat * 1e7, 2);
  EXPECT_NEAR(q.lon, spec.longitude_deg * 1e7, 2);
  // Facing south, level: q_NED_FRD is a half turn about down.
  EXPECT_NEAR(std::abs(q.attitude_quaternion[3]), 1.0, 1e-6);
  const auto& g = px4.gps;
  EXPECT_EQ(g.vn, -200);
  EXPECT_EQ(g.ve, 0);
  EXPECT_EQ(g.cog, 18000);  // course over ground: south
  EXPECT_NEAR(g.lat, lat * 1e7, 2);
  // Facing south, body x is −north and body y (right) is −east; down stays down.
  const auto b = sensors::wmm_model(lat, spec.longitude_deg, 498.0).enu() * 1e4;
  EXPECT_NEAR(px4.sensor.xmag, -b.Y(), 1e-5);
  EXPECT_NEAR(px4.sensor.ymag, -b.X(), 1e-5);
  EXPECT_NEAR(px4.sensor.zmag, -b.Z(), 1e-5);
}

TEST(Px4Bridge, ResetKeepsPx4sClockGoingForward) {
  for (const bool time_only : {false, true}) {
    SCOPED_TRACE(time_only ? "time-only reset" : "full reset");
    const int instance = time_only ? 21 : 20;
    auto r = px4_world(instance);
    FakePx4 px4(4560 + instance);
    fly(*r, 100);
    // The last HIL_SENSOR sent: at the latest multiple of 4 ms of sim time (the peer may not
    // have read it yet).
    const auto before = static_cast<std::uint64_t>(r->info().sim_time.count() / 4'000'000 * 4000);
    int received = 0;
    {
      std::lock_guard lock(px4.m);
      received = px4.sensors;
    }
    testing::internal::CaptureStderr();
    r->reset_now(time_only);
    ASSERT_EQ(r->info().sim_time.count(), 0);
    for (int i = 0; i < 100; ++i) r->step_once();  // 100 ms of sim time
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("the world was reset while PX4 is connected; PX4's clock cannot go back, "
                       "so HIL time_usec continues from " +
                       std::to_string(before + 4000) + " us"),
              std::string::npos)
        << err;
    std::lock_guard lock(px4.m);
    EXPECT_FALSE(px4.went_back);
    EXPECT_GE(px4.sensors, received + 24);  // 25 sensor messages, lockstep went on
    // The clock continues as if the reset took no time (the peer may not have read the last).
    EXPECT_GE(px4.sensor.time_usec, before + 96'000);
    EXPECT_LE(px4.sensor.time_usec, before + 100'000);
    EXPECT_GT(rotor(*r, 0), 0);  // PX4's answers still drive the rotors
  }
}

TEST(Px4Bridge, AltimeterIsSentAsADownwardDistanceSensorAtItsRate) {
  WorldSpec spec;
  spec.X_WB = Pose3d(0, 0, 10, 0.2, 0, M_PI / 2);  // rolled 0.2 rad
  auto r = make_world(spec);
  auto& reg = r->registry();
  const auto link = reg.find_scoped("w::quad::base_link");
  ASSERT_NE(link, ecs::kNullEntity);
  const auto alt = reg.create(link);
  reg.add<c::Name>(alt, c::Name{"altimeter"});
  reg.add<c::Sensor>(alt, c::Sensor{"altimeter", 50, "", true, nullptr});
  // Started 8 m up, now 2 m higher; noise σ = 2 cm.
  c::AltimeterReading reading;
  reading.sequence = 1;
  reading.vertical_reference = 8.0;
  reading.vertical_position = 2.0;
  reading.vertical_position_variance = 0.02 * 0.02;
  reg.add<c::AltimeterReading>(alt, reading);
  attach(*r, Autopilot::kPx4,
         "<instance>22</instance><distance_min>0.2</distance_min><distance_max>30</distance_max>");
  FakePx4 px4(4560 + 22);
  fly(*r, 20);
  int before = 0;
  {
    std::lock_guard lock(px4.m);
    ASSERT_EQ(px4.distances, 1);  // one altimeter sample so far: one message
    const auto& d = px4.distance;
    EXPECT_EQ(d.current_distance, std::lround(1000.0 / std::cos(0.2)));  // 10 m height, tilted
    EXPECT_EQ(d.min_distance, 20);
    EXPECT_EQ(d.max_distance, 3000);
    EXPECT_EQ(d.orientation, 25);  // MAV_SENSOR_ROTATION_PITCH_270: down
    EXPECT_EQ(d.type, 0);          // MAV_DISTANCE_SENSOR_LASER
    EXPECT_EQ(d.covariance, 4);    // cm²
    EXPECT_EQ(d.time_boot_ms, px4.distance_sensor_usec / 1000);
    before = px4.distances;
  }
  // Each new altimeter sample is sent once, with the next HIL_SENSOR.
  for (int k = 1; k <= 3; ++k) {
    auto& a = reg.get<c::AltimeterReading>(alt);
    ++a.sequence;
    a.vertical_position = 2.0 + k;
    for (int i = 0; i < 8; ++i) r->step_once();
  }
  std::lock_guard lock(px4.m);
  EXPECT_EQ(px4.distances, before + 3);
  EXPECT_EQ(px4.distance.current_distance, std::lround(1300.0 / std::cos(0.2)));
}

// An IMU on a link "arm" of the model that is not the base link: the arm at X_BA from the base
// link (as a joint would hold it), the IMU at X_AS in the arm. The test writes the IMU's
// readings, as the IMU system would compute them for the vehicle of `spec` (at rest, yawing).
struct ArmImu {
  ArmImu(sim::Runner& r, const WorldSpec& spec, const Pose3d& X_BA, const Pose3d& X_AS)
      : reg(r.registry()), spec(spec) {
    const auto model = reg.child_by_name(r.world(), "quad");
    arm = reg.create(model);
    reg.add<c::Name>(arm, c::Name{"arm"});
    reg.add<c::Link>(arm);
    reg.add<c::Pose>(arm, c::Pose{X_BA});
    reg.add<c::WorldPose>(arm, c::WorldPose{sensors::compose(spec.X_WB, X_BA)});
    imu = reg.create(arm);
    reg.add<c::Name>(imu, c::Name{"imu"});
    reg.add<c::Sensor>(imu, c::Sensor{"imu", 0, "", true, nullptr});
    reg.add<c::Pose>(imu, c::Pose{X_AS});
    reg.add<c::ImuReading>(imu);
    this->X_AS = X_AS;
  }
  // The arm moves to X_BA (its joint turned); a new sample as the IMU measures it there:
  // specific force +g up and the body's yaw rate, in the sensor frame.
  void move_and_sample(const Pose3d& X_BA) {
    const Pose3d X_WA = sensors::compose(spec.X_WB, X_BA);
    reg.get<c::WorldPose>(arm).value = X_WA;
    const auto q_WS = sensors::compose(X_WA, X_AS).Rot();
    auto& r = reg.get<c::ImuReading>(imu);
    r.linear_acceleration = q_WS.RotateVectorReverse({0, 0, 9.8});
    r.angular_velocity = q_WS.RotateVectorReverse(spec.X_WB.Rot().RotateVector({0, 0, 0.5}));
    ++r.sequence;
  }
  ecs::Registry& reg;
  WorldSpec spec;
  ecs::Entity arm, imu;
  Pose3d X_AS;
};

TEST(Px4Bridge, AnImuOnATiltedChildLinkIsExpressedInTheBodyFrame) {
  // The arm rolled 0.5 and pitched 0.3 rad from the base link, the IMU yawed 1 rad on it: PX4
  // must still see the level body's −g along FRD z and its yaw rate, whatever the arm's pose.
  const WorldSpec spec;
  auto r = make_world(spec);
  ArmImu arm(*r, spec, Pose3d(0.2, 0, 0, 0.5, 0.3, 0), Pose3d(0, 0, 0.05, 0, 0, 1.0));
  arm.move_and_sample(Pose3d(0.2, 0, 0, 0.5, 0.3, 0));
  attach(*r, Autopilot::kPx4, "<instance>23</instance>");
  FakePx4 px4(4560 + 23);
  fly(*r, 8);
  auto expect_body_frame = [&] {
    std::lock_guard lock(px4.m);
    EXPECT_NEAR(px4.sensor.xacc, 0, 1e-5);
    EXPECT_NEAR(px4.sensor.yacc, 0, 1e-5);
    EXPECT_NEAR(px4.sensor.zacc, -9.8, 1e-5);
    EXPECT_NEAR(px4.sensor.xgyro, 0, 1e-6);
    EXPECT_NEAR(px4.sensor.ygyro, 0, 1e-6);
    EXPECT_NEAR(px4.sensor.zgyro, -0.5, 1e-6);
  };
  expect_body_frame();
  // The joint turns the arm: the rotation comes from the links' current world poses.
  arm.move_and_sample(Pose3d(0.2, 0, 0, -1.1, 0.7, 0.4));
  fly(*r, 8);
  expect_body_frame();
}

TEST(Px4Bridge, WithAnAnswerTimeoutAStalledPeerZeroesRotorsAndLockstepResumes) {
  auto r = px4_world(13, "<answer_timeout>0.3</answer_timeout>");
  FakePx4 px4(4560 + 13);
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  ASSERT_GT(rotor(*r, 0), 0);
  px4.answer = false;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 8; ++i) r->step_once();  // one sensor message goes unanswered
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("did not answer HIL_SENSOR"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  px4.answer = true;
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  EXPECT_GT(rotor(*r, 0), 0);
}

// `kestrel run --sitl-answer-timeout / --sitl-connect-timeout` reach every bridge through
// components::SitlTimeouts on the world, overriding the <plugin>'s parameters.
TEST(Px4Bridge, TheRunsTimeoutsOverrideTheBridgesParameters) {
  auto r = make_world();
  r->registry().add<c::SitlTimeouts>(r->world(), c::SitlTimeouts{std::nullopt, 0.3});
  attach(*r, Autopilot::kPx4, "<instance>27</instance><answer_timeout>600</answer_timeout>");
  FakePx4 px4(4560 + 27);
  fly(*r, 8);
  px4.answer = false;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 8; ++i) r->step_once();  // runs on after 0.3 s, not 600 s
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("within 0.3 s (wall clock, --sitl-answer-timeout"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);

  auto w = make_world();
  w->registry().add<c::SitlTimeouts>(w->world(), c::SitlTimeouts{0.2, std::nullopt});
  attach(*w, Autopilot::kArduPilot, "<instance>9</instance>");
  testing::internal::CaptureStderr();
  EXPECT_THROW(w->step_once(), Error);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("giving up after 0.2 s"), std::string::npos) << err;
}

TEST(Px4Bridge, WithAnAnswerTimeoutADisconnectZeroesRotorsAndReconnectResumes) {
  auto r = px4_world(14, "<answer_timeout>10</answer_timeout>");
  {
    FakePx4 px4(4560 + 14);
    for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
    ASSERT_GT(rotor(*r, 0), 0);
  }
  testing::internal::CaptureStderr();
  for (int i = 0; i < 10; ++i) r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("PX4 disconnected"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  FakePx4 again(4560 + 14);
  again.garbage = true;  // and malformed bytes before every answer
  for (int i = 0; i < 20000 && rotor(*r, 0) <= 0; ++i) r->step_once();
  EXPECT_GT(rotor(*r, 0), 0);
}

TEST(Px4Bridge, GarbageFromThePeerNeverCrashesAndIsCountedFromTheFirstByte) {
  auto r = px4_world(15, "<answer_timeout>10</answer_timeout>");
  const int fd = connect_tcp(4560 + 15);
  ASSERT_GE(fd, 0);
  std::uint8_t junk[3000];
  for (std::size_t i = 0; i < sizeof junk; ++i)
    junk[i] = static_cast<std::uint8_t>(i * 7 + (i >> 3));
  junk[100] = 0xFD;
  junk[500] = 0xFE;
  ASSERT_EQ(::send(fd, junk, sizeof junk, 0), static_cast<ssize_t>(sizeof junk));
  // A HEARTBEAT whose CRC is wrong: a bad frame, never an exchange.
  std::uint8_t bad[mav::kMaxFrameSize];
  const auto k = mav::encode(mav::Heartbeat{}, 0, {1, 1}, bad);
  bad[k - 1] ^= 0xFF;
  ASSERT_EQ(::send(fd, bad, k, 0), static_cast<ssize_t>(k));
  testing::internal::CaptureStderr();
  for (int i = 0; i < 50; ++i) r->step_once();
  EXPECT_EQ(rotor(*r, 0), 0.0);
  ::close(fd);
  for (int i = 0; i < 10; ++i) r->step_once();  // runs on (<answer_timeout>) after the close
  r.reset();                                    // the summary is printed at the end
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("malformed MAVLink from PX4"), std::string::npos) << err;
  EXPECT_NE(err.find("1 connection, " + std::to_string(sizeof junk + k) +
                     " bytes received, 0 lockstep exchanges"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("bad CRC "), std::string::npos) << err;
  EXPECT_EQ(err.find("bad input: 0 frames"), std::string::npos) << err;
}

// Without a connection the world holds at its first step and says what it waits for and
// where; <connect_timeout> ends the wait with an error naming both, at sim time 0.
TEST(Px4Bridge, HoldsTheWorldUntilPx4ConnectsOrTheConnectTimeout) {
  auto r = px4_world(23, "<connect_timeout>0.2</connect_timeout>");
  testing::internal::CaptureStderr();
  try {
    r->step_once();
    ADD_FAILURE() << "expected the connect timeout";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PX4 instance 23 did not connect on TCP "
                                         "127.0.0.1:4583 within 0.2 s"),
              std::string::npos)
        << e.what();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("waiting for PX4 instance 23 to connect on TCP 127.0.0.1:4583 (sim time "
                     "0.000 s held, giving up after 0.2 s)"),
            std::string::npos)
      << err;
  EXPECT_EQ(r->info().sim_time.count(), 0);
  EXPECT_EQ(r->info().iterations, 0u);
}

// A stop request (SIGINT/SIGTERM through the Server) ends a wait that has no limit.
TEST(Px4Bridge, StopEndsTheWaitForAConnection) {
  auto r = px4_world(24);
  std::thread stopper([&] { r->stop(); });
  testing::internal::CaptureStderr();
  EXPECT_THROW(r->step_once(), sim::StepInterrupted);
  stopper.join();
  testing::internal::GetCapturedStderr();
  r->run();  // returns at once: stopped
  EXPECT_EQ(r->info().iterations, 0u);
}

// Once lockstep is on, an unanswered HIL_SENSOR holds the world for as long as the connection is
// open (a warning every 5 s of wall clock), then the late answer releases it: no run-on, no
// rotors to zero. (The one test that takes 6 s: the warning is about wall-clock time.)
TEST(Px4Bridge, WithoutAnAnswerTheWorldHoldsAndSaysSoEvery5s) {
  auto r = px4_world(25);
  FakePx4 px4(4560 + 25);
  fly(*r, 8);
  // The last HIL_SENSOR of fly() may still be on its way to the fake: whichever one arrives
  // first while answers are off is the one the bridge waits for.
  px4.answer = false;
  testing::internal::CaptureStderr();
  std::thread stepper([&] {
    for (int i = 0; i < 8; ++i) r->step_once();  // an unanswered sensor message holds them
  });
  // Once the unanswered message has arrived, the bridge waits: 6 s later nothing more has come
  // and it has warned once.
  int sensors = 0;
  for (int i = 0; i < 20'000 && sensors == 0; ++i) {
    {
      std::lock_guard lock(px4.m);
      if (px4.unanswered > 0) sensors = px4.sensors;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(sensors, 0) << "no HIL_SENSOR reached the fake PX4";
  std::this_thread::sleep_for(std::chrono::seconds(6));
  {
    std::lock_guard lock(px4.m);
    EXPECT_EQ(px4.sensors, sensors) << "the world went on without the answer";
    EXPECT_EQ(px4.unanswered, 1);
    // The fake answers the message it did not answer, late.
    std::uint8_t out[mav::kMaxFrameSize];
    mav::HilActuatorControls a;
    a.time_usec = px4.sensor.time_usec;
    a.controls[0] = 0.25f;
    a.mode = static_cast<std::uint8_t>(mav::mav_mode_flag::kSafetyArmed);
    const auto k = mav::encode(a, 0, {1, 1}, out);
    px4.answer = true;
    ASSERT_EQ(::send(px4.fd, out, k, MSG_NOSIGNAL), static_cast<ssize_t>(k));
  }
  stepper.join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("waiting 5 s (wall clock) for PX4's answer (HIL_ACTUATOR_CONTROLS) to "
                     "HIL_SENSOR time_usec"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("rotors set to zero"), std::string::npos) << err;
  EXPECT_GT(rotor(*r, 0), 0);
}

// While PX4 boots (connected, no answer yet) the bridge asks the Runner for real time; from
// the first answer on the world's own factor applies.
TEST(Px4Bridge, RealTimeWhileBootingThenTheWorldsFactor) {
  auto r = px4_world(26);
  const auto model = r->registry().child_by_name(r->world(), "quad");
  FakePx4 px4(4560 + 26);
  px4.answer = false;  // booting
  for (int i = 0; i < 20; ++i) r->step_once();
  EXPECT_TRUE(r->registry().get<c::RealTimePacing>(model).active);
  px4.answer = true;
  fly(*r, 8);
  EXPECT_FALSE(r->registry().get<c::RealTimePacing>(model).active);
  // Without lockstep PX4 keeps its own clock: real time all along, answers or not.
  auto w = px4_world(28, "<lockstep>false</lockstep>");
  FakePx4 free_running(4560 + 28);
  fly(*w, 8);
  const auto quad = w->registry().child_by_name(w->world(), "quad");
  EXPECT_TRUE(w->registry().get<c::RealTimePacing>(quad).active);
}

TEST(Px4Bridge, ReplacedTimeoutParametersSayWhatToWrite) {
  for (const auto& [old, now] : {std::pair{"lockstep_timeout", "answer_timeout"},
                                 std::pair{"wait_for_px4", "connect_timeout"}}) {
    auto r = make_world();
    const auto model = r->registry().child_by_name(r->world(), "quad");
    r->add_system(make_px4_bridge_system(), model,
                  Element::parse(fmt::format("<plugin>\n<{0}>1</{0}></plugin>", old), "w.sdf", 7),
                  "kestrel::systems::Px4Bridge", "test");
    try {
      r->configure();
      ADD_FAILURE() << "expected an error for <" << old << ">";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("w.sdf:8: PX4 bridge (model 'w::quad', "
                                                       "instance 0): <{}> was replaced",
                                                       old)),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(fmt::format("write <{}>", now)), std::string::npos)
          << e.what();
    }
  }
  auto r = make_world();
  const auto model = r->registry().child_by_name(r->world(), "quad");
  r->add_system(make_px4_bridge_system(), model,
                Element::parse("<plugin><answer_timeout>0</answer_timeout></plugin>", "w.sdf"),
                "kestrel::systems::Px4Bridge", "test");
  EXPECT_THROW(r->configure(), Error);
}

// Control surfaces (planes, VTOLs): output channels → JointPositionController command entries
// (a Double topic, or one index of an Actuators topic), PX4's bipolar and ArduPilot's unipolar
// outputs, neutral when inactive, and a loud error for a channel that maps to nothing.
TEST(SurfaceMap, ChannelsCommandTheJointPositionControllersTopics) {
  ecs::Registry r;
  const auto model = r.create();
  auto& in = r.add<c::TopicInputs>(model);
  in.real.push_back({"/model/p/servo_2", 0, 0});
  in.actuators.push_back({"/model/p/servo", {}, {}, {}, 0});
  in.actuators.push_back({"/model/p/servo", {}, {}, {}, 0});  // two controllers on one topic
  const auto cfg = Element::parse(
      "<plugin><channel><index>4</index><rotor>0</rotor></channel>"
      "<surface><index>5</index><topic>/model/p/servo</topic><actuator>1</actuator>"
      "<scale>0.4</scale></surface>"
      "<surface><index>6</index><topic>/model/p/servo_2</topic><offset>0.05</offset></surface>"
      "</plugin>",
      "w.sdf", 7);
  const auto rotors = ChannelMap::parse(*cfg, ChannelMap::identity(4, 1000), 16, 1000, "b");
  auto m = SurfaceMap::parse(*cfg, rotors, 16, "b");
  ASSERT_EQ(m.surfaces.size(), 2u);
  m.resolve(r, model, "b");
  const std::vector<double> px4 = {0, 0, 0, 0, 0.7, -0.5, 2.0};  // channel 6 beyond +1: clamped
  m.apply(px4, false, true, r, model);
  for (const auto& a : r.get<c::TopicInputs>(model).actuators) {
    ASSERT_EQ(a.position.size(), 2u);
    EXPECT_DOUBLE_EQ(a.position[1], -0.2);
    EXPECT_EQ(a.count, 1u);
  }
  EXPECT_DOUBLE_EQ(r.get<c::TopicInputs>(model).real[0].value, 0.5 + 0.05);
  // ArduPilot: 0..1 of the pwm range, 0.75 → +0.5 of full scale.
  const std::vector<double> ardupilot = {0, 0, 0, 0, 0, 0.75, 0.5};
  m.apply(ardupilot, true, true, r, model);
  EXPECT_DOUBLE_EQ(r.get<c::TopicInputs>(model).actuators[0].position[1], 0.2);
  EXPECT_DOUBLE_EQ(r.get<c::TopicInputs>(model).real[0].value, 0.05);
  // Inactive (disarmed, stalled): every surface to its offset.
  m.apply(px4, false, false, r, model);
  EXPECT_DOUBLE_EQ(r.get<c::TopicInputs>(model).actuators[1].position[1], 0.0);
  EXPECT_EQ(r.get<c::TopicInputs>(model).real[0].count, 3u);

  // A channel that maps to nothing: the topic no controller listens on, at its FILE:LINE.
  auto bad = SurfaceMap::parse(
      *Element::parse("<plugin><surface><index>5</index><topic>/model/p/nope</topic></surface>"
                      "</plugin>",
                      "w.sdf", 9),
      rotors, 16, "b");
  try {
    bad.resolve(r, model, "b");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w.sdf:9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("output channel 5 maps to nothing"), std::string::npos)
        << e.what();
  }
  // A channel mapped to a rotor and a surface; an unknown child.
  EXPECT_THROW(SurfaceMap::parse(*Element::parse("<plugin><channel><index>4</index><rotor>0"
                                                 "</rotor></channel><surface><index>4</index>"
                                                 "<topic>t</topic></surface></plugin>"),
                                 rotors, 16, "b"),
               Error);
  EXPECT_THROW(SurfaceMap::parse(*Element::parse("<plugin><surface><index>7</index><topic>t"
                                                 "</topic><scal>1</scal></surface></plugin>"),
                                 rotors, 16, "b"),
               Error);
}

TEST(Px4Bridge, BadParametersAreLoud) {
  auto r = make_world();
  const auto model = r->registry().child_by_name(r->world(), "quad");
  r->add_system(make_px4_bridge_system(), model,
                Element::parse("<plugin><channel><index>16</index><rotor>0</rotor></channel>"
                               "</plugin>",
                               "w.sdf", 3),
                "kestrel::systems::Px4Bridge", "test");
  try {
    r->configure();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w.sdf:3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range (expected 0..15)"), std::string::npos)
        << e.what();
  }
}

// A system that does nothing, added under a built-in's name (e.g. "MulticopterMotorModel") as if
// `origin` declared it: what attach_bridge checks is the list of systems.
void add_stand_in(sim::Runner& r, ecs::Entity entity, const std::string& system,
                  const std::string& origin = "w.sdf:1", const std::string& plugin = "<plugin/>") {
  r.add_system(std::make_unique<System>(), entity, Element::parse(plugin, "w.sdf"),
               "kestrel::systems::" + system, origin);
}

ecs::Entity add_model(sim::Runner& r, const std::string& name,
                      ecs::Entity parent = ecs::kNullEntity, bool is_static = false) {
  auto& reg = r.registry();
  const auto m = reg.create(parent == ecs::kNullEntity ? r.world() : parent);
  reg.add<c::Name>(m, c::Name{name});
  reg.add<c::Model>(m);
  if (is_static) reg.add<c::Static>(m, c::Static{true});
  return m;
}

// Every argument the world cannot take is an AttachError naming it and what is wrong, before
// anything listens (no configure here).
// `attach()` throws an AttachError whose message contains `what`.
template <class F>
void expect_error(F&& attach, const std::string& what) {
  try {
    attach();
    ADD_FAILURE() << "expected an AttachError containing: " << what;
  } catch (const AttachError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Px4Bridge, CommandLineAttachmentsTheWorldCannotTakeAreUsageErrors) {
  for (const char* bad : {"x3:", "w::x3:"}) {
    expect_error([&] { parse_attach_spec(bad, "--px4"); },
                 std::string("--px4 ") + bad + ": nothing after ':'");
  }
  for (const char* bad : {"x3:a", "x3:-1", "x3:1001", "x3:1x", "x3: 1"}) {
    expect_error([&] { parse_attach_spec(bad, "--ardupilot"); }, "is not an instance number");
  }
  expect_error([&] { parse_attach_spec(":2", "--px4"); }, "no model name");
  EXPECT_EQ(parse_attach_spec("w::x3", "--px4").model, "w::x3");
  EXPECT_EQ(parse_attach_spec("w::x3:7", "--px4").instance, 7u);

  auto r = make_world();
  auto& reg = r->registry();
  const auto quad = reg.child_by_name(r->world(), "quad");
  add_stand_in(*r, quad, "MulticopterMotorModel");
  add_model(*r, "ground_plane", ecs::kNullEntity, true);
  add_stand_in(*r, add_model(*r, "bare"), "LinearBatteryPlugin");
  const auto outer = add_model(*r, "outer");
  add_stand_in(*r, add_model(*r, "inner", outer), "MulticopterMotorModel");
  const auto ctl = add_model(*r, "ctl");
  add_stand_in(*r, ctl, "MulticopterMotorModel");
  add_stand_in(*r, ctl, "MulticopterVelocityControl", "w.sdf:42");
  const auto mission = add_model(*r, "mission");
  add_stand_in(*r, mission, "MulticopterMotorModel");
  add_stand_in(*r, mission, "MulticopterMission", "w.sdf:77");
  const auto declared = add_model(*r, "declared");
  add_stand_in(*r, declared, "MulticopterMotorModel");
  add_stand_in(*r, declared, "ArduPilotBridge", "w.sdf:60",
               "<plugin><instance>3</instance></plugin>");
  for (const char* name : {"quad2", "quad3"}) {
    add_stand_in(*r, add_model(*r, name), "MulticopterMotorModel");
  }
  const auto px4 = Autopilot::kPx4, ardupilot = Autopilot::kArduPilot;
  attach_bridge(*r, px4, {"quad", 0});
  const auto systems = r->systems().size();
  struct Refused {
    Autopilot autopilot;
    AttachSpec spec;
    const char* message;
  };
  const Refused refused[] = {
      {px4,
       {"quad", 1},
       "--px4 quad:1: model 'w::quad' is given twice (--px4 quad:0 already attaches PX4"},
      {ardupilot,
       {"quad", 0},
       "--ardupilot quad:0: model 'w::quad' is already flown by PX4 (from --px4 quad:0): one "
       "autopilot per model"},
      {px4, {"declared", 5}, "model 'w::declared' is already flown by ArduPilot (from w.sdf:60)"},
      {px4,
       {"ground_plane", 1},
       "--px4 ground_plane:1: model 'w::ground_plane' is static: it cannot fly"},
      {px4,
       {"bare", 1},
       "model 'w::bare' has no MulticopterMotorModel <plugin> of its own: the PX4 bridge's rotor "
       "commands (ActuatorCommands on the model) would drive nothing"},
      {ardupilot, {"outer", 1}, "(nested model 'w::outer::inner' has rotors: give its name)"},
      {px4,
       {"ctl", 1},
       "--px4 ctl:1: model 'w::ctl' has a MulticopterVelocityControl (w.sdf:42) that drives its "
       "rotors too"},
      {ardupilot, {"mission", 1}, "model 'w::mission' has a MulticopterMission (w.sdf:77)"},
      {px4,
       {"quad2", 0},
       "--px4 quad2:0: TCP port 4560 is already used by the PX4 bridge of model 'w::quad' (from "
       "--px4 quad:0): give each vehicle its own instance"},
      {ardupilot,
       {"quad3", 3},
       "UDP port 9032 is already used by the ArduPilot bridge of model 'w::declared' (from "
       "w.sdf:60)"},
  };
  for (const auto& c : refused) {
    expect_error([&] { attach_bridge(*r, c.autopilot, c.spec); }, c.message);
  }
  EXPECT_EQ(r->systems().size(), systems) << "a refused argument adds nothing";
  // Different instances, or PX4 and ArduPilot on the same instance number (TCP 4560 + i,
  // UDP 9002 + 10 i), are fine; a nested model is named by its scoped name.
  attach_bridge(*r, px4, {"quad2", 1});
  attach_bridge(*r, ardupilot, {"quad3", 0});
  attach_bridge(*r, ardupilot, {"w::outer::inner", 1});
  EXPECT_EQ(r->systems().size(), systems + 3);
}

TEST(Px4Bridge, AttachFromTheCommandLine) {
  EXPECT_EQ(parse_attach_spec("x500:3", "--px4").instance, 3u);
  EXPECT_EQ(parse_attach_spec("x500:3", "--px4").model, "x500");
  EXPECT_EQ(parse_attach_spec("w::x500", "--px4").model, "w::x500");
  EXPECT_EQ(parse_attach_spec("w::x500:2", "--px4").instance, 2u);
  EXPECT_THROW(parse_attach_spec("x500:a", "--px4"), Error);
  EXPECT_THROW(parse_attach_spec(":1", "--px4"), Error);
  auto r = make_world();
  try {
    attach_bridge(*r, Autopilot::kPx4, {"nope", 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no model 'nope' (its models: quad)"), std::string::npos)
        << e.what();
  }
  add_stand_in(*r, r->registry().child_by_name(r->world(), "quad"), "MulticopterMotorModel");
  testing::internal::CaptureStderr();
  attach_bridge(*r, Autopilot::kPx4, {"quad", 16});
  r->configure();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("no imu, magnetometer, air_pressure, navsat sensor; using noise-free ones"),
            std::string::npos)
      << err;
  EXPECT_GE(connect_tcp(4560 + 16), 0);  // listening
}

// A channel map that drives fewer rotors than the model has motors is refused before anything
// listens, naming the model, its motors and the map (the motor model used to stop the run at
// the first command).
TEST(Px4Bridge, AMapThatMissesAMotorIsRefusedWhenTheBridgeAttaches) {
  auto r = make_world();
  const auto quad = r->registry().child_by_name(r->world(), "quad");
  for (int i = 0; i < 6; ++i) {
    add_stand_in(*r, quad, "MulticopterMotorModel", "w.sdf:" + std::to_string(10 + i),
                 "<plugin><actuator_number>" + std::to_string(i) + "</actuator_number></plugin>");
  }
  attach_bridge(*r, Autopilot::kArduPilot, {"quad", 0});
  try {
    check_channel_maps(*r);
    ADD_FAILURE() << "expected an AttachError";
  } catch (const AttachError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "--ardupilot quad:0: model 'w::quad' has 6 motors (actuator_number 0, 1, 2, "
                  "3, 4, 5) but the ArduPilot bridge's channel map (output channel→rotor: 0→0, "
                  "1→1, 2→2, 3→3) drives no rotor 4, 5"),
              std::string::npos)
        << e.what();
  }
  // Declared in the world with a map covering 4 of the 6: an error at its FILE:LINE.
  auto w = make_world();
  const auto hexa = w->registry().child_by_name(w->world(), "quad");
  for (int i = 0; i < 6; ++i) {
    add_stand_in(*w, hexa, "MulticopterMotorModel", "w.sdf:1",
                 "<plugin><actuator_number>" + std::to_string(i) + "</actuator_number></plugin>");
  }
  add_stand_in(*w, hexa, "ArduPilotBridge", "w.sdf:40",
               "<plugin><channel><index>5</index><rotor>5</rotor></channel></plugin>");
  try {
    check_channel_maps(*w);
    ADD_FAILURE() << "expected an Error";
  } catch (const AttachError& e) {
    ADD_FAILURE() << "a world's bridge is not a command-line error: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("w.sdf:40: model 'w::quad' has 6 motors"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(output channel→rotor: 5→5) drives no rotor 0, 1, 2, "
                                         "3, 4"),
              std::string::npos)
        << e.what();
  }
}

// Without <channel> or <surface>, a PX4 bridge drives its model in PX4's Gazebo layout: output a
// the motor with actuator_number a (or <motorNumber>, PX4's spelling) at its maxRotVelocity,
// then output M + k the servo_k topic at ±45°.
TEST(Px4Bridge, WithoutAMapTheModelGetsPx4sGazeboLayout) {
  auto r = make_world();
  const auto quad = r->registry().child_by_name(r->world(), "quad");
  for (int i = 0; i < 6; ++i) {
    add_stand_in(*r, quad, "MulticopterMotorModel", "w.sdf:1",
                 fmt::format("<plugin><{0}>{1}</{0}><maxRotVelocity>{2}</maxRotVelocity></plugin>",
                             i % 2 ? "motorNumber" : "actuator_number", i, 900 + 100 * i));
  }
  for (const char* servo : {"servo_1", "servo_0", "aileron"}) {
    add_stand_in(*r, quad, "JointPositionController", "w.sdf:2",
                 fmt::format("<plugin><sub_topic>{}</sub_topic></plugin>", servo));
  }
  attach_bridge(*r, Autopilot::kPx4, {"quad", 0});
  testing::internal::CaptureStderr();
  check_channel_maps(*r);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("--px4 quad:0: PX4 bridge of model 'w::quad': no <channel> or <surface> "
                      "given, so PX4's Gazebo layout of the model: output→rotor 0→0 (900 rad/s), "
                      "1→1 (1000 rad/s)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("output→servo topic (±45°) 6→servo_0, 7→servo_1; PX4 gives it with "
                      "PWM_MAIN_FUNC1 101, PWM_MAIN_FUNC2 102"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("PWM_MAIN_FUNC6 106, PWM_MAIN_FUNC7 201, PWM_MAIN_FUNC8 202"),
            std::string::npos)
      << said;
  const auto& cfg = *r->systems().back().config;
  const auto rotors = ChannelMap::parse(cfg, ChannelMap::identity(4, 1000), 16, 1000, "b");
  ASSERT_EQ(rotors.channels.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(rotors.channels[i].index, i);
    EXPECT_EQ(rotors.channels[i].rotor, i);
    EXPECT_EQ(rotors.channels[i].scale, 900 + 100 * i);
  }
  const auto surfaces = SurfaceMap::parse(cfg, rotors, 16, "b");
  ASSERT_EQ(surfaces.surfaces.size(), 2u);
  EXPECT_EQ(surfaces.surfaces[0].index, 6);
  EXPECT_EQ(surfaces.surfaces[0].topic, "/model/quad/servo_0");
  EXPECT_EQ(surfaces.surfaces[1].index, 7);
  EXPECT_DOUBLE_EQ(surfaces.surfaces[1].scale, M_PI / 4);

  // With <max_rotor_velocity> every motor gets that scale; a given map is kept as it is.
  auto w = make_world();
  const auto one = w->registry().child_by_name(w->world(), "quad");
  add_stand_in(*w, one, "MulticopterMotorModel", "w.sdf:1",
               "<plugin><motorNumber>0</motorNumber><maxRotVelocity>700</maxRotVelocity></plugin>");
  add_stand_in(*w, one, "Px4Bridge", "w.sdf:9",
               "<plugin><max_rotor_velocity>650</max_rotor_velocity></plugin>");
  check_channel_maps(*w);
  const auto scaled =
      ChannelMap::parse(*w->systems().back().config, ChannelMap::identity(4, 1), 16, 1, "b");
  ASSERT_EQ(scaled.channels.size(), 1u);
  EXPECT_EQ(scaled.channels[0].scale, 650);
  EXPECT_NE(w->systems().back().config->where().find("w.sdf"), std::string::npos);

  // A layout beyond the 16 outputs of HIL_ACTUATOR_CONTROLS is refused.
  auto big = make_world();
  const auto many = big->registry().child_by_name(big->world(), "quad");
  add_stand_in(*big, many, "MulticopterMotorModel", "w.sdf:1",
               "<plugin><actuator_number>3</actuator_number></plugin>");
  add_stand_in(*big, many, "JointPositionController", "w.sdf:2",
               "<plugin><sub_topic>servo_12</sub_topic></plugin>");
  add_stand_in(*big, many, "Px4Bridge", "w.sdf:9", "<plugin/>");
  try {
    check_channel_maps(*big);
    ADD_FAILURE() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 17 outputs, but HIL_ACTUATOR_CONTROLS carries 16"),
              std::string::npos)
        << e.what();
  }
}

// PX4's standard_vtol (../shared), attached from the command line: PX4's controls reach its five
// motors at their maxRotVelocity and its three control surfaces, which move to the angle.
TEST(Px4Bridge, Px4sStandardVtolFliesOnItsGazeboLayout) {
  const auto model = std::filesystem::path(KESTREL_SHARED_DIR) / "models/px4/models/standard_vtol";
  if (!std::filesystem::exists(model / "model.sdf")) {
    GTEST_SKIP() << "PX4's model zoo (" << KESTREL_SHARED_DIR << "/models/px4/models) is absent";
  }
  const auto file = std::filesystem::path(testing::TempDir()) /
                    ("vtol_layout_" + std::to_string(::getpid()) + ".sdf");
  std::ofstream(file) << R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <physics type="ode"><max_step_size>0.004</max_step_size><real_time_factor>0</real_time_factor></physics>
  <model name="ground"><static>true</static><link name="l"><collision name="c"><geometry><plane>
    <normal>0 0 1</normal><size>100 100</size></plane></geometry></collision></link></model>
  <include><uri>)" + model.string() +
                             R"(</uri><pose>0 0 0.3 0 0 0</pose></include>
</world></sdf>)";
  sim::Runner::Options o;
  o.real_time_factor = 0;
  sim::Runner r(o);
  world::load_world_into_runner(file, r);
  std::filesystem::remove(file);  // read: not left in the temp folder
  attach_bridge(r, Autopilot::kPx4, {"standard_vtol", 23});
  check_channel_maps(r);
  r.configure();
  FakePx4 px4(4560 + 23);
  {
    std::lock_guard lock(px4.m);
    px4.fixed_controls = std::array<float, 16>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.4f, -0.4f, 0.2f};
  }
  auto& reg = r.registry();
  const auto vtol = reg.child_by_name(r.world(), "standard_vtol");
  auto commanded = [&] {
    const auto* a = reg.try_get<c::ActuatorCommands>(vtol);
    return a && !a->velocity.empty() && a->velocity[0] > 0;
  };
  for (int i = 0; i < 20000 && !commanded(); ++i) r.step_once();
  ASSERT_TRUE(commanded()) << "PX4 never answered";
  for (int i = 0; i < 2500; ++i) r.step_once();  // 10 s: the surfaces settle (PID 1, 0.1, 0.01)
  const auto& v = reg.get<c::ActuatorCommands>(vtol).velocity;
  ASSERT_EQ(v.size(), 5u);
  const double want[] = {150, 300, 450, 600, 1750};  // 1500·u (lift), 3500·u (pusher)
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(v[i], want[i], 1e-3) << "motor " << i;
  for (const auto& [joint, angle] : {std::pair{"servo_0", 0.4 * M_PI / 4},
                                     {"servo_1", -0.4 * M_PI / 4},
                                     {"servo_2", 0.2 * M_PI / 4}}) {
    const auto j = reg.child_by_name(vtol, joint);
    ASSERT_NE(j, ecs::kNullEntity) << joint;
    const auto* q = reg.try_get<c::JointPosition>(j);
    ASSERT_TRUE(q && !q->data.empty()) << joint;
    EXPECT_NEAR(q->data[0], angle, 0.02) << joint;
  }
}

// ---- ArduPilot ------------------------------------------------------------------------------

TEST(ArduPilotBridge, EachServoPacketAdvancesOneFrameAndIsAnsweredOnce) {
  auto r = make_world();
  attach(*r, Autopilot::kArduPilot, "<instance>3</instance><answer_timeout>0.3</answer_timeout>");
  FakeArduPilot ap(9002 + 30);
  // Frames at 250 Hz = 4 steps of 1 ms each.
  for (std::uint32_t frame = 1; frame <= 5; ++frame) {
    ap.send(frame, 1500, 250);
    const auto before = r->info().sim_time;
    // Runs until the reply is sent (the bridge waits for the packet in the first step).
    for (int i = 0; i < 4; ++i) r->step_once();
    EXPECT_EQ((r->info().sim_time - before).count(), 4'000'000);
    EXPECT_NEAR(rotor(*r, 0), 500.0, 1e-9);  // 1500 µs = half of 1000 rad/s
    const std::string text = ap.receive();
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.front(), '\n');
    const auto j = nlohmann::json::parse(text);
    EXPECT_NEAR(j["timestamp"].get<double>(), frame * 0.004, 1e-12);
    EXPECT_NEAR(j["imu"]["accel_body"][2].get<double>(), -9.8, 1e-9);
    EXPECT_NEAR(j["imu"]["gyro"][2].get<double>(), -0.5, 1e-12);
    EXPECT_NEAR(j["position"][2].get<double>(), -10.0, 1e-12);            // 10 m up = −10 m down
    EXPECT_NEAR(j["velocity"][0].get<double>(), 2.0, 1e-12);              // north
    EXPECT_NEAR(std::abs(j["quaternion"][0].get<double>()), 1.0, 1e-12);  // facing north
  }
  // A malformed datagram is ignored (warned once); no packet: warning after the timeout.
  const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
  ::sendto(ap.fd, junk, sizeof junk, 0, reinterpret_cast<sockaddr*>(&ap.to), sizeof ap.to);
  testing::internal::CaptureStderr();
  r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("malformed servo packet"), std::string::npos) << err;
  EXPECT_NE(err.find("no servo packet from ArduPilot"), std::string::npos) << err;
  EXPECT_EQ(rotor(*r, 0), 0.0);
  // Packets again: lockstep resumes.
  ap.send(6, 2000, 250);
  for (int i = 0; i < 4; ++i) r->step_once();
  EXPECT_NEAR(rotor(*r, 0), 1000.0, 1e-9);
  EXPECT_FALSE(ap.receive().empty());
}

TEST(ArduPilotBridge, WorldHeadingIsRotatedIntoNed) {
  // As Px4Bridge.WorldHeadingIsRotatedIntoNed: 100 m south of the origin, facing and moving south.
  WorldSpec spec;
  spec.heading_deg = 90;
  spec.X_WB = Pose3d(100, 0, 10, 0, 0, 0);
  spec.v_WB_W = {2, 0, 0};
  auto r = make_world(spec);
  attach(*r, Autopilot::kArduPilot, "<instance>4</instance>");
  FakeArduPilot ap(9002 + 40);
  ap.send(1, 1500, 250);
  for (int i = 0; i < 4; ++i) r->step_once();
  const std::string text = ap.receive();
  ASSERT_FALSE(text.empty());
  const auto j = nlohmann::json::parse(text);
  EXPECT_NEAR(j["position"][0].get<double>(), -100.0, 1e-9);  // north
  EXPECT_NEAR(j["position"][1].get<double>(), 0.0, 1e-9);     // east
  EXPECT_NEAR(j["position"][2].get<double>(), -10.0, 1e-9);
  EXPECT_NEAR(j["velocity"][0].get<double>(), -2.0, 1e-9);
  EXPECT_NEAR(j["velocity"][1].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(std::abs(j["quaternion"][3].get<double>()), 1.0, 1e-9);  // facing south
}

TEST(ArduPilotBridge, ResetKeepsItsClockGoingForward) {
  auto r = make_world();
  attach(*r, Autopilot::kArduPilot, "<instance>5</instance>");
  FakeArduPilot ap(9002 + 50);
  auto exchange = [&](std::uint32_t frame) {
    ap.send(frame, 1500, 250);
    for (int i = 0; i < 4; ++i) r->step_once();
    const std::string text = ap.receive();
    return text.empty() ? -1.0 : nlohmann::json::parse(text)["timestamp"].get<double>();
  };
  EXPECT_NEAR(exchange(1), 0.004, 1e-12);
  EXPECT_NEAR(exchange(2), 0.008, 1e-12);
  testing::internal::CaptureStderr();
  r->reset_now();
  const double after = exchange(3);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NEAR(after, 0.012, 1e-12);  // continues from 8 ms, not back to 4 ms
  EXPECT_NE(err.find("the JSON timestamp continues from 0.012000 s"), std::string::npos) << err;
  EXPECT_NEAR(exchange(4), 0.016, 1e-12);
}

// Before the first servo packet the world holds at its first step and says so; the connect
// timeout ends the run with an error; a stop request ends a wait without limit.
TEST(ArduPilotBridge, HoldsUntilTheFirstPacketOrTheConnectTimeoutOrAStop) {
  auto r = make_world();
  attach(*r, Autopilot::kArduPilot, "<instance>6</instance><connect_timeout>0.2</connect_timeout>");
  testing::internal::CaptureStderr();
  try {
    r->step_once();
    ADD_FAILURE() << "expected the connect timeout";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ArduPilot instance 6 sent no servo packet to UDP "
                                         "127.0.0.1:9062 within 0.2 s"),
              std::string::npos)
        << e.what();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("waiting for ArduPilot instance 6 to send its first servo packet to UDP "
                     "127.0.0.1:9062 (sim time 0.000 s held, giving up after 0.2 s)"),
            std::string::npos)
      << err;
  EXPECT_EQ(r->info().iterations, 0u);

  auto w = make_world();
  attach(*w, Autopilot::kArduPilot, "<instance>7</instance>");
  FakeArduPilot ap(9002 + 70);
  ap.send(1, 1500, 250);
  for (int i = 0; i < 4; ++i) w->step_once();
  EXPECT_FALSE(ap.receive().empty());
  // Lockstep: no packet, no step — until stopped.
  std::thread stopper([&] { w->stop(); });
  EXPECT_THROW(w->step_once(), sim::StepInterrupted);
  stopper.join();
  EXPECT_EQ(w->info().iterations, 4u);
}

// Every packet is answered exactly once; a repeated frame count gets that frame's state again
// without a step, a gap in the counts is reported.
TEST(ArduPilotBridge, RepeatedAndSkippedFramesAreAnsweredOnceAndReported) {
  auto r = make_world();
  attach(*r, Autopilot::kArduPilot, "<instance>8</instance>");
  FakeArduPilot ap(9002 + 80);
  testing::internal::CaptureStderr();
  ap.send(1, 1500, 250);
  for (int i = 0; i < 4; ++i) r->step_once();
  const std::string first = ap.receive();
  ASSERT_FALSE(first.empty());
  ap.send(1, 1500, 250);  // a repeat: answered with the same state, no step
  ap.send(3, 1500, 250);  // frame 2 never came
  for (int i = 0; i < 4; ++i) r->step_once();
  EXPECT_EQ(ap.receive(), first);
  const std::string third = ap.receive();
  ASSERT_FALSE(third.empty());
  EXPECT_NEAR(nlohmann::json::parse(third)["timestamp"].get<double>(), 0.008, 1e-12);
  EXPECT_EQ(r->info().iterations, 8u);
  r.reset();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ArduPilot sent frame 1 again"), std::string::npos) << err;
  EXPECT_NE(err.find("frame count jumped from 1 to 3: 1 frame never arrived"), std::string::npos)
      << err;
  EXPECT_NE(err.find("3 servo packets, 2 frames answered, 1 repeated and 1 skipped frame counts"),
            std::string::npos)
      << err;
}

TEST(ArduPilotBridge, AnImuOnATiltedChildLinkIsExpressedInTheBodyFrame) {
  // As Px4Bridge.AnImuOnATiltedChildLinkIsExpressedInTheBodyFrame, in the JSON's accel_body.
  const WorldSpec spec;
  auto r = make_world(spec);
  ArmImu arm(*r, spec, Pose3d(0.2, 0, 0, 0.5, 0.3, 0), Pose3d(0, 0, 0.05, 0, 0, 1.0));
  attach(*r, Autopilot::kArduPilot, "<instance>12</instance>");
  FakeArduPilot ap(9002 + 120);
  for (std::uint32_t frame = 1; frame <= 2; ++frame) {
    arm.move_and_sample(frame == 1 ? Pose3d(0.2, 0, 0, 0.5, 0.3, 0)
                                   : Pose3d(0.2, 0, 0, -1.1, 0.7, 0.4));
    ap.send(frame, 1500, 250);
    for (int i = 0; i < 4; ++i) r->step_once();
    const std::string text = ap.receive();
    ASSERT_FALSE(text.empty());
    const auto j = nlohmann::json::parse(text);
    EXPECT_NEAR(j["imu"]["accel_body"][0].get<double>(), 0, 1e-12);
    EXPECT_NEAR(j["imu"]["accel_body"][1].get<double>(), 0, 1e-12);
    EXPECT_NEAR(j["imu"]["accel_body"][2].get<double>(), -9.8, 1e-12);
    EXPECT_NEAR(j["imu"]["gyro"][2].get<double>(), -0.5, 1e-12);
  }
}

// A channel the model maps beyond the packet's channel count (SERVO21 in ArduPilot's default
// 16-channel packet) ends the run at the first such packet, naming the model, the channel and
// the count; with SERVO_32_ENABLE's 32-channel packets the same map flies. PWM 0 (ArduPilot's
// "no output") leaves a rotor at 0 and a surface at its neutral offset, not at full deflection.
TEST(ArduPilotBridge, AChannelBeyondThePacketsCountIsAnErrorAndPwm0IsNoOutput) {
  const std::string params =
      "<plugin>\n<instance>13</instance>\n"
      "<channel><index>0</index><rotor>0</rotor></channel>\n"
      "<channel><index>20</index><rotor>1</rotor></channel>\n"
      "<surface><index>5</index><topic>/model/quad/elevator</topic><scale>0.4</scale>"
      "<offset>0.05</offset></surface>\n</plugin>";
  auto make = [&](sim::Runner& r) {
    const auto model = r.registry().child_by_name(r.world(), "quad");
    r.registry().add<c::TopicInputs>(model).real.push_back({"/model/quad/elevator", 0, 0});
    r.add_system(make_ardupilot_bridge_system(), model, Element::parse(params, "w.sdf", 40),
                 "kestrel::systems::ArduPilotBridge", "test");
    r.configure();
  };
  {
    auto r = make_world();
    make(*r);
    FakeArduPilot ap(9002 + 130);
    ap.send_pwm(1, {1500, 1500, 1500, 1500}, 250);  // 16 channels
    try {
      r->step_once();
      ADD_FAILURE() << "expected an error for SERVO21 in a 16-channel packet";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("w.sdf:43: ArduPilot bridge (model 'w::quad', instance 13): output "
                          "channel 20 (SERVO21) drives rotor 1, but ArduPilot's servo packets "
                          "carry 16 channels (magic 18458)"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("SERVO_32_ENABLE 1"), std::string::npos) << what;
    }
    EXPECT_EQ(r->info().iterations, 0u);
  }
  auto r = make_world();
  make(*r);
  FakeArduPilot ap(9002 + 130);
  std::vector<std::uint16_t> pwm(32, 0);
  pwm[0] = 1500;
  pwm[20] = 1750;
  pwm[5] = 1250;  // surface: 2·0.25 − 1 = −0.5 of full scale
  ap.send_pwm(1, pwm, 250, 32);
  for (int i = 0; i < 4; ++i) r->step_once();
  EXPECT_FALSE(ap.receive().empty());
  const auto model = r->registry().child_by_name(r->world(), "quad");
  EXPECT_NEAR(rotor(*r, 0), 500.0, 1e-9);
  EXPECT_NEAR(rotor(*r, 1), 750.0, 1e-9);
  EXPECT_DOUBLE_EQ(r->registry().get<c::TopicInputs>(model).real[0].value, -0.2 + 0.05);
  // PWM 0 on every channel: nothing outputs. Rotors 0, the surface at its offset.
  ap.send_pwm(2, std::vector<std::uint16_t>(32, 0), 250, 32);
  for (int i = 0; i < 4; ++i) r->step_once();
  EXPECT_FALSE(ap.receive().empty());
  EXPECT_EQ(rotor(*r, 0), 0.0);
  EXPECT_EQ(rotor(*r, 1), 0.0);
  EXPECT_DOUBLE_EQ(r->registry().get<c::TopicInputs>(model).real[0].value, 0.05);
}

TEST(ArduPilotPacket, RejectsWrongSizesAndMagic) {
  ServoPacket p;
  std::string err;
  std::uint8_t buf[72]{};
  mav::put_le(buf, kServoMagic32);
  mav::put_le(buf + 2, std::uint16_t{400});
  EXPECT_TRUE(parse_servo_packet(buf, 72, p, err)) << err;
  EXPECT_EQ(p.channels, 32u);
  EXPECT_FALSE(parse_servo_packet(buf, 40, p, err));
  EXPECT_NE(err.find("expected 72"), std::string::npos);
  mav::put_le(buf, std::uint16_t{1234});
  EXPECT_FALSE(parse_servo_packet(buf, 40, p, err));
  EXPECT_FALSE(parse_servo_packet(buf, 3, p, err));
}

// ---- RflySimBridge (src/sitl/rflysim) ------------------------------------------------------------

// A UDP peer on loopback: sends to Kestrel's input port, receives on the output port.
struct RflyPeer {
  explicit RflyPeer(int copter_id)
      : rx(udp_bind("127.0.0.1", rflysim::output_port(copter_id), "test")),
        tx(::socket(AF_INET, SOCK_DGRAM, 0)),
        to(make_address("127.0.0.1", rflysim::input_port(copter_id), "test")) {}
  void send(const std::vector<std::uint8_t>& b) {
    ::sendto(tx.get(), b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  }
  // The datagrams waiting, by size: the latest 480-byte (truth) and 256-byte (data) ones.
  bool receive(std::vector<double>& truth, std::vector<double>& data) {
    bool any = false;
    std::uint8_t buf[1024];
    for (;;) {
      const ssize_t n = ::recv(rx.get(), buf, sizeof buf, 0);
      if (n < 0) return any;
      auto& out = n == 480 ? truth : data;
      out.assign(static_cast<std::size_t>(n) / 8, 0.0);
      std::memcpy(out.data(), buf, static_cast<std::size_t>(n));  // little-endian host
      any = true;
    }
  }
  Fd rx, tx;
  sockaddr_in to;
};

std::array<float, 20> rfly_floats(std::initializer_list<float> v) {
  std::array<float, 20> a{};
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

std::unique_ptr<sim::Runner> rflysim_world(int copter_id, bool controller = true,
                                           const std::string& params = "",
                                           const std::function<void(sim::Runner&)>& add = {},
                                           double rate = 1000) {
  auto r = make_world();
  if (add) add(*r);
  const auto model = r->registry().child_by_name(r->world(), "quad");
  if (controller) {  // what MulticopterVelocityControl creates at configure
    r->registry().add<c::TwistCommand>(model);
    r->registry().add<c::VelocityControlEnable>(model, c::VelocityControlEnable{false});
  }
  r->add_system(make_rflysim_bridge_system(), model,
                Element::parse(fmt::format("<plugin><copter_id>{}</copter_id><rate>{}</rate>{}"
                                           "</plugin>",
                                           copter_id, rate, params)),
                "kestrel::systems::RflySimBridge", "test");
  r->configure();
  return r;
}

TEST(RflySimBridge, VelocityCommandsBecomeBodyTwistsAndTheTruthIsNed) {
  auto r = rflysim_world(5);
  RflyPeer peer(5);
  auto& reg = r->registry();
  const auto model = reg.child_by_name(r->world(), "quad");
  // Facing north, 10 m up, 2 m/s north, yawing left at 0.5 rad/s (make_world).
  peer.send(rflysim::encode_int_float(5, {1}, rfly_floats({1.0f, 0.0f, -1.0f, 0.3f})));
  usleep(20000);
  r->step_once();
  const auto& twist = reg.get<c::TwistCommand>(model);
  EXPECT_TRUE(twist.received);
  // North 1 m/s = forward; up 1 m/s = body up; NED yaw rate +0.3 = −0.3 about FLU z.
  EXPECT_NEAR(twist.linear.X(), 1.0, 1e-6);
  EXPECT_NEAR(twist.linear.Y(), 0.0, 1e-6);
  EXPECT_NEAR(twist.linear.Z(), 1.0, 1e-6);
  EXPECT_NEAR(twist.angular.Z(), -0.3, 1e-6);
  EXPECT_TRUE(reg.get<c::VelocityControlEnable>(model).value);
  std::vector<double> truth, data;
  usleep(20000);
  ASSERT_TRUE(peer.receive(truth, data));
  ASSERT_EQ(truth.size(), 60u);
  ASSERT_EQ(data.size(), 32u);
  EXPECT_EQ(truth[0], 5);
  EXPECT_NEAR(truth[2], 0.001, 1e-12);  // the end of the first 1 ms step
  EXPECT_NEAR(truth[3], 2.0, 1e-9);     // VelE north
  EXPECT_NEAR(truth[8], -10.0, 1e-9);   // PosE down
  EXPECT_NEAR(truth[11], 0.0, 1e-9);    // yaw: facing north
  EXPECT_NEAR(truth[26], -9.8, 1e-9);   // AccB down: specific force at rest in the air
  EXPECT_NEAR(truth[29], -0.5, 1e-9);   // RateB r: yawing left is negative in FRD
  EXPECT_NEAR(truth[30], 47.397742, 1e-3);
  EXPECT_NEAR(truth[31], 8.545594, 1e-3);
  EXPECT_EQ(data[2], 1);  // mode
  EXPECT_EQ(data[3], 1);  // applied

  // Bad packets are counted per kind, said once per kind, and never applied.
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    peer.send(rflysim::encode_int_float(5, {1}, rfly_floats({0, 0, 3}), 42));
  }
  peer.send(rflysim::encode_int_float(4, {1}, rfly_floats({0, 0, 3})));
  peer.send(std::vector<std::uint8_t>(7, 0));
  usleep(20000);
  r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NEAR(reg.get<c::TwistCommand>(model).linear.Z(), 1.0, 1e-6);  // unchanged
  EXPECT_NE(err.find("wrong checksum (checksum 42 instead of 1234567897)"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("wrong checksum"), err.rfind("wrong checksum")) << err;
  EXPECT_NE(err.find("unknown CopterID (CopterID 4, this vehicle is 5)"), std::string::npos);
  EXPECT_NE(err.find("wrong size (7 bytes"), std::string::npos);
  usleep(20000);
  ASSERT_TRUE(peer.receive(truth, data));
  EXPECT_EQ(data[4], 1);  // wrong size
  EXPECT_EQ(data[5], 2);  // wrong checksum
  EXPECT_EQ(data[6], 1);  // unknown CopterID
  EXPECT_EQ(data[3], 1);  // applied: still one

  // Mode 3: the motors directly, the controller idle (no twist).
  peer.send(rflysim::encode_int_float(5, {3}, rfly_floats({0.5f, 0.25f, 1.0f, 0.0f})));
  usleep(20000);
  r->step_once();
  EXPECT_FALSE(reg.get<c::TwistCommand>(model).received);
  EXPECT_NEAR(rotor(*r, 0), 400.0, 1e-4);  // 0.5 · 800 rad/s
  EXPECT_NEAR(rotor(*r, 1), 200.0, 1e-4);
  EXPECT_NEAR(rotor(*r, 2), 800.0, 1e-4);

  // A reset returns to mode 0: nothing is written any more.
  r->reset_now();
  reg.get<c::ActuatorCommands>(model).velocity.assign(8, 1.0);
  r->step_once();
  EXPECT_EQ(rotor(*r, 0), 1.0);
  usleep(20000);
  ASSERT_TRUE(peer.receive(truth, data));
  EXPECT_EQ(data[2], 0);
}

TEST(RflySimBridge, PositionModeFliesTowardsTheTargetAndWithoutAControllerIsRefused) {
  {
    auto r = rflysim_world(6);
    RflyPeer peer(6);
    const auto model = r->registry().child_by_name(r->world(), "quad");
    // Target 3 m north, same height, yaw east (π/2): 3 m error · gain 1 = 3 m/s, limited to 2.
    peer.send(rflysim::encode_doub_ctrls(6, {2, 3, 0, -10, M_PI / 2}));
    usleep(20000);
    r->step_once();
    const auto& twist = r->registry().get<c::TwistCommand>(model);
    EXPECT_NEAR(twist.linear.X(), 2.0, 1e-9);  // forward = north
    EXPECT_NEAR(twist.linear.Z(), 0.0, 1e-9);
    // Yaw error +π/2 · gain 1 = 1.57, limited to 1 rad/s clockwise = −1 about FLU z.
    EXPECT_NEAR(twist.angular.Z(), -1.0, 1e-9);
  }
  auto r = rflysim_world(7, false);
  RflyPeer peer(7);
  testing::internal::CaptureStderr();
  peer.send(rflysim::encode_int_float(7, {1}, rfly_floats({0, 0, -1})));
  usleep(20000);
  r->step_once();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("mode the model cannot fly"), std::string::npos) << err;
}

// A receiver of one kind of 30-double datagram (HILSensor30d or HILGPS30d) on its own port.
struct HilReceiver {
  explicit HilReceiver(int port) : rx(udp_bind("127.0.0.1", port, "test")) {}
  // Every 240-byte datagram waiting, in arrival order.
  std::vector<std::vector<double>> receive() {
    std::vector<std::vector<double>> out;
    std::uint8_t buf[1024];
    for (;;) {
      const ssize_t n = ::recv(rx.get(), buf, sizeof buf, 0);
      if (n < 0) return out;
      EXPECT_EQ(n, 240);
      out.emplace_back(static_cast<std::size_t>(n) / 8);
      std::memcpy(out.back().data(), buf, static_cast<std::size_t>(n));  // little-endian host
    }
  }
  Fd rx;
};

// A sensor entity of type `type` on the quad's base link (its frame = the body's), with a
// reading the test writes.
template <class Reading>
ecs::Entity add_sensor(sim::Runner& r, const std::string& type) {
  auto& reg = r.registry();
  const auto link = reg.child_by_name(reg.child_by_name(r.world(), "quad"), "base_link");
  const auto s = reg.create(link);
  reg.add<c::Name>(s, c::Name{type});
  reg.add<c::Sensor>(s, c::Sensor{type, 0, "", true, nullptr});
  reg.add<c::Pose>(s);
  reg.add<Reading>(s);
  return s;
}

TEST(RflySimBridge, HilSensorAndGpsAreTheModelsSensorsInFrdAndNedOnTheirPorts) {
  ecs::Entity imu, mag, baro, gps;
  auto r = rflysim_world(8, true,
                         "<hil_sensor_port>30311</hil_sensor_port><hil_gps_port>30312"
                         "</hil_gps_port><hil_sensor_rate>1000</hil_sensor_rate>",
                         [&](sim::Runner& w) {
                           imu = add_sensor<c::ImuReading>(w, "imu");
                           mag = add_sensor<c::MagnetometerReading>(w, "magnetometer");
                           baro = add_sensor<c::AirPressureReading>(w, "air_pressure");
                           gps = add_sensor<c::NavSatReading>(w, "navsat");
                         });
  HilReceiver sensors(30311), gnss(30312);
  auto& reg = r->registry();
  // The sensors' readings, in their (= the body's FLU) frames and SI units.
  auto& i = reg.get<c::ImuReading>(imu);
  i.linear_acceleration = {0.1, 0.2, 9.7};
  i.angular_velocity = {0.01, 0.02, 0.5};
  i.sequence = 1;
  auto& m = reg.get<c::MagnetometerReading>(mag);
  m.field = {2e-5, 1e-6, -4e-5};
  m.sequence = 1;
  auto& b = reg.get<c::AirPressureReading>(baro);
  b.pressure = 95000;
  b.sequence = 1;
  auto& n = reg.get<c::NavSatReading>(gps);
  n.latitude_deg = 47.4;
  n.longitude_deg = 8.5;
  n.altitude = 500;
  n.velocity_enu = {1, 2, -0.5};  // east 1, north 2, up −0.5 m/s
  n.sequence = 1;
  r->step_once();
  usleep(20000);
  auto s = sensors.receive();
  auto g = gnss.receive();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(g.size(), 1u);
  const auto& h = s[0];
  EXPECT_EQ(h[0], 1000);  // time_usec: the end of the first 1 ms step
  // FLU → FRD: (x, −y, −z).
  EXPECT_NEAR(h[1], 0.1, 1e-12);
  EXPECT_NEAR(h[2], -0.2, 1e-12);
  EXPECT_NEAR(h[3], -9.7, 1e-12);
  EXPECT_NEAR(h[4], 0.01, 1e-12);
  EXPECT_NEAR(h[5], -0.02, 1e-12);
  EXPECT_NEAR(h[6], -0.5, 1e-12);
  // Tesla → gauss (× 10⁴), FRD.
  EXPECT_NEAR(h[7], 0.2, 1e-12);
  EXPECT_NEAR(h[8], -0.01, 1e-12);
  EXPECT_NEAR(h[9], 0.4, 1e-12);
  EXPECT_NEAR(h[10], 950.0, 1e-9);  // hPa
  EXPECT_EQ(h[11], 0);              // no pitot
  EXPECT_NEAR(h[12], altitude_of_pressure(95000, 101325, 288.15, -0.0065), 1e-9);
  // The air at the vehicle, 10 m above the 488 m origin: 288.15 − 0.0065 · 498 K, in °C.
  EXPECT_NEAR(h[13], 288.15 - 0.0065 * 498 - 273.15, 1e-9);
  EXPECT_EQ(h[14], 1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 256 + 512 + 2048 + 4096);
  for (std::size_t k = 15; k < 30; ++k) EXPECT_EQ(h[k], 0) << k;
  const auto& p = g[0];
  EXPECT_EQ(p[0], 1000);
  EXPECT_NEAR(p[1], 474000000.0, 1e-6);  // degE7, not rounded
  EXPECT_NEAR(p[2], 85000000.0, 1e-6);
  EXPECT_NEAR(p[3], 500000.0, 1e-9);  // mm
  EXPECT_EQ(p[4], 30);                // gps_eph 0.3 m in cm
  EXPECT_EQ(p[5], 40);
  EXPECT_NEAR(p[6], 100 * std::sqrt(5.0), 1e-9);  // ground speed [cm/s]
  EXPECT_NEAR(p[7], 200, 1e-9);                   // north
  EXPECT_NEAR(p[8], 100, 1e-9);                   // east
  EXPECT_NEAR(p[9], 50, 1e-9);                    // down
  EXPECT_NEAR(p[10], std::atan2(1.0, 2.0) * 180 / M_PI * 100, 1e-9);  // cdeg from north
  EXPECT_EQ(p[11], 3);
  EXPECT_EQ(p[12], 10);
  for (std::size_t k = 13; k < 30; ++k) EXPECT_EQ(p[k], 0) << k;

  // No new samples: HILSensor30d goes on with no field updated, HILGPS30d waits for the
  // receiver's next sample, which then comes without a fix.
  r->step_once();
  usleep(20000);
  s = sensors.receive();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0][0], 2000);
  EXPECT_EQ(s[0][14], 0);
  EXPECT_NEAR(s[0][3], -9.7, 1e-12);  // the last sample
  EXPECT_TRUE(gnss.receive().empty());
  n.fix = false;
  n.latitude_deg = n.longitude_deg = n.altitude = std::nan("");
  ++n.sequence;
  r->step_once();
  usleep(20000);
  g = gnss.receive();
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0][0], 3000);
  EXPECT_EQ(g[0][11], 0);  // fix_type
  EXPECT_EQ(g[0][12], 0);  // satellites
  EXPECT_EQ(g[0][1], 0);
  for (int k : {4, 5, 6, 10}) EXPECT_EQ(g[0][k], 65535) << k;  // MAVLink's "unknown"
}

TEST(RflySimBridge, HilFromTheTruthWithoutSensorsAndOnlyOnRequest) {
  // Facing north, 10 m up, 2 m/s north, yawing left at 0.5 rad/s (make_world), no sensors:
  // noise-free values from the truth, HILGPS30d at <hil_gps_rate>; both on their own schedules
  // (the truth goes at 100 Hz).
  auto r = rflysim_world(9, true,
                         "<hil_sensor_port>30313</hil_sensor_port><hil_gps_port>30314"
                         "</hil_gps_port><hil_sensor_rate>500</hil_sensor_rate><hil_gps_rate>"
                         "250</hil_gps_rate>",
                         {}, 100);
  HilReceiver sensors(30313), gnss(30314);
  for (int k = 0; k < 8; ++k) r->step_once();
  usleep(20000);
  const auto s = sensors.receive();
  const auto g = gnss.receive();
  ASSERT_EQ(s.size(), 4u);  // at 2, 4, 6, 8 ms
  ASSERT_EQ(g.size(), 2u);  // at 4, 8 ms
  EXPECT_EQ(s[0][0], 2000);
  EXPECT_EQ(s[3][0], 8000);
  EXPECT_EQ(g[1][0], 8000);
  const auto& h = s[3];
  EXPECT_NEAR(h[1], 0, 1e-9);
  EXPECT_NEAR(h[2], 0, 1e-9);
  EXPECT_NEAR(h[3], -9.8, 1e-9);  // specific force at rest: −g along FRD z
  EXPECT_NEAR(h[6], -0.5, 1e-9);  // yawing left: negative about FRD z
  const auto& p = g[1];
  // The world's spherical coordinates at the origin (the vehicle is 10 m straight above it).
  EXPECT_NEAR(p[1], 473977420, 1e-2);
  EXPECT_NEAR(p[2], 85455940, 1e-2);
  EXPECT_NEAR(p[3], 498000, 1);  // 488 m + 10 m, in mm
  EXPECT_NEAR(p[7], 200, 1e-6);  // 2 m/s north
  EXPECT_NEAR(p[8], 0, 1e-6);
  EXPECT_NEAR(p[10], 0, 1e-6);  // course north

  // Without the request nothing is sent to those ports.
  auto quiet = rflysim_world(10);
  HilReceiver none(30315);
  for (int k = 0; k < 8; ++k) quiet->step_once();
  usleep(20000);
  EXPECT_TRUE(none.receive().empty());
  auto refused = [](int id, const std::string& params, const std::string& what) {
    try {
      rflysim_world(id, true, params);
      ADD_FAILURE() << "expected an Error containing: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  refused(11, "<hil_sensor_port>30316</hil_sensor_port><hil_gps_port>30316</hil_gps_port>",
          "could not tell them apart");
  refused(12, "<hil_gps_port>0</hil_gps_port>",
          "<hil_gps_port> must be a UDP port 1..65535, got 0");
}

// The peer test's world (test/worlds/rflysim_x3.sdf: the X3 with its motors, its velocity
// controller and FaultInjection) with the bridge attached as `--rflysim x3:ID` attaches it,
// stepped as fast as it goes.
std::unique_ptr<sim::Runner> rflysim_x3(int copter_id) {
  sim::Runner::Options o;
  o.real_time_factor = 0;
  auto r = std::make_unique<sim::Runner>(o);
  world::WorldSetupOptions wo;
  wo.apply_physics = false;  // the world's RTF is 1; this one runs unpaced
  world::load_world_into_runner(
      std::filesystem::path(KESTREL_SOURCE_DIR) / "test/worlds/rflysim_x3.sdf", *r, wo);
  r->set_step_size(r->registry().get<c::PhysicsParams>(r->world()).max_step_size);
  attach_rflysim(*r, fmt::format("x3:{}", copter_id));
  r->configure();
  return r;
}

TEST(RflySimBridge, MotorFaultParametersBecomeFaultInjectionRotorFaults) {
  auto r = rflysim_x3(13);
  RflyPeer peer(13);
  auto& reg = r->registry();
  const auto model = reg.child_by_name(r->world(), "x3");
  auto speed = [&](std::size_t i) {
    return std::abs(reg.get<c::RotorVelocities>(model).velocity[i]);
  };
  auto run = [&](int steps) {
    usleep(20000);  // the datagrams have arrived
    for (int k = 0; k < steps; ++k) r->step_once();
  };
  // Mode 3: every motor at 0.5 = 400 rad/s (7.9 N of thrust against 14.7 N of weight: the X3
  // stays on the ground).
  peer.send(rflysim::encode_int_float(13, {3}, rfly_floats({0.5f, 0.5f, 0.5f, 0.5f})));
  run(300);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(speed(i), 400, 0.5) << i;

  // Motor 2 (actuator number 1) fails: FaultInParams [123450, 1, 0, 1, 1], all five flagged.
  std::array<double, 32> p{};
  p[0] = rflysim::kMotorFaultId;
  p[1] = p[3] = p[4] = 1;
  p[2] = 0;
  peer.send(rflysim::encode_model_in_params(0b11111, p));
  run(500);  // 0.5 s = 20 of the motor's spin-down time constants (25 ms)
  EXPECT_LT(speed(1), 0.5);  // unpowered: spun down
  for (std::size_t i : {0, 2, 3}) EXPECT_NEAR(speed(i), 400, 0.5) << i;
  const auto& faults = reg.get<c::RotorFaults>(model).efficiency;
  ASSERT_GE(faults.size(), 2u);
  EXPECT_EQ(faults[1], 0);
  EXPECT_EQ(faults[0], 1);
  const auto& log = reg.get<c::FaultLog>(r->world()).events;
  ASSERT_EQ(log.size(), 1u);  // only the motor that changed
  EXPECT_NE(log[0].description.find("rotor 1 of rflysim_x3::x3 efficiency 0"), std::string::npos)
      << log[0].description;

  // Only InParams[2] changes (Bitmask bit 2): motor 2 at efficiency 0.5 keeps its speed and
  // loses half its thrust (FaultInjection's partial rotor fault), the others stay healthy.
  std::array<double, 32> half{};
  half[2] = 0.5;
  peer.send(rflysim::encode_model_in_params(1u << 2, half));
  run(500);
  EXPECT_EQ(reg.get<c::RotorFaults>(model).efficiency[1], 0.5);
  EXPECT_NEAR(speed(1), 400, 0.5);

  // Refused whole, counted, said once per kind; the fault state stays as it was.
  std::vector<double> truth, data;
  peer.receive(truth, data);  // what the socket holds so far (its buffer drops the newest)
  testing::internal::CaptureStderr();
  std::array<double, 32> unknown{};
  unknown[0] = 123455;
  peer.send(rflysim::encode_model_in_params(1, unknown));
  std::array<double, 32> too_much{};
  too_much[3] = 1.5;
  peer.send(rflysim::encode_model_in_params(1u << 3, too_much));
  peer.send(rflysim::encode_model_in_params(0b11111, p, rflysim::kInitChecksum));
  peer.send(rflysim::encode_model_in_params(0b11111, p, 5));
  // TerrainIn15d as RflySim's SDK packs it ("ii20f", checksum 1234567881): refused by name.
  std::vector<std::uint8_t> terrain(88, 0);
  const std::int32_t terrain_checksum = rflysim::kTerrainChecksum;
  std::memcpy(terrain.data(), &terrain_checksum, 4);  // little-endian host
  terrain[4] = 13;
  peer.send(terrain);
  run(50);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("fault Kestrel cannot apply (fault ID 123455 (InParams[0]): Kestrel maps "
                     "123450"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("fault Kestrel cannot apply"), err.rfind("fault Kestrel cannot apply"));
  EXPECT_NE(err.find("wrong checksum (checksum 5 instead of 1234567891"), std::string::npos)
      << err;
  EXPECT_NE(err.find("input the model does not take (TerrainIn15d (checksum 1234567881)"),
            std::string::npos)
      << err;
  EXPECT_EQ(reg.get<c::RotorFaults>(model).efficiency,
            (std::vector<double>{1, 0.5}));  // rotors 2 and 3 were never faulted
  ASSERT_TRUE(peer.receive(truth, data));
  EXPECT_EQ(data[10], 3);  // fault Kestrel cannot apply: unknown ID, 1.5, InitInParams
  EXPECT_EQ(data[5], 1);   // wrong checksum
  EXPECT_EQ(data[11], 1);  // input the model does not take: TerrainIn15d
  EXPECT_EQ(data[12], 2);  // fault parameter packets applied
  EXPECT_EQ(data[13], rflysim::kMotorFaultId);
  EXPECT_NEAR(truth[17] * 2 * M_PI / 60, 400, 0.5);  // MotorRPMS[1]: motor 2 spins

  // Fault ID 0: no fault, every motor healthy again.
  std::array<double, 32> none{};
  peer.send(rflysim::encode_model_in_params(1, none));
  run(10);
  EXPECT_EQ(reg.get<c::RotorFaults>(model).efficiency[1], 1);
  EXPECT_EQ(reg.get<c::FaultLog>(r->world()).events.size(), 3u);

  // A world without FaultInjection cannot take faults: refused and said so.
  auto bare = rflysim_world(14);
  RflyPeer other(14);
  testing::internal::CaptureStderr();
  other.send(rflysim::encode_model_in_params(0b11111, p));
  usleep(20000);
  bare->step_once();
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("the world declares no FaultInjection system"), std::string::npos) << err;
}

// A flood on the input port cannot hold a step: at most 64 datagrams are read per step, the
// rest on the next steps, every one counted.
TEST(RflySimBridge, AFloodIsReadAtMost64DatagramsPerStep) {
  auto r = rflysim_world(11);
  RflyPeer peer(11);
  const auto bad = rflysim::encode_int_float(11, {0}, rfly_floats({}), 123456789);
  testing::internal::CaptureStderr();
  // 130 small datagrams fit loopback's default receive buffer (none dropped by the kernel).
  for (int i = 0; i < 130; ++i) peer.send(bad);
  usleep(20000);
  std::vector<double> truth, data;
  const std::vector<double> per_step{64, 128, 130};
  for (double expected : per_step) {
    r->step_once();  // 1 ms: the rate (1000 Hz) sends outCopterData every step
    usleep(5000);
    ASSERT_TRUE(peer.receive(truth, data));
    ASSERT_EQ(data.size(), 32u);
    EXPECT_EQ(data[5], expected) << "wrong-checksum datagrams counted so far";
  }
  testing::internal::GetCapturedStderr();
}

TEST(RflySimBridge, RatesWhosePeriodTheClockCannotHoldAreRefused) {
  for (const char* p : {"", "<hil_sensor_port>30400</hil_sensor_port><hil_sensor_rate>1e12"
                            "</hil_sensor_rate>"}) {
    const double rate = std::string(p).empty() ? 1e12 : 100;
    try {
      rflysim_world(12, true, p, {}, rate);
      ADD_FAILURE() << "a rate of 1e12 Hz was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("Hz gives a period outside from 1 ns"),
                std::string::npos)
          << e.what();
    }
  }
  try {
    rflysim_world(12, true, "<vehicle_type>-1</vehicle_type>");
    ADD_FAILURE() << "vehicle_type -1 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("<vehicle_type> must be >= 0"), std::string::npos)
        << e.what();
  }
}

TEST(RflySimBridge, CommandLineAttachmentsTheWorldCannotTakeAreUsageErrors) {
  auto r = make_world();
  // IDs 1..10000 (the bridge's copter_id range), 1 without ":ID".
  for (const char* bad : {"quad:0", "quad:10001", "quad:x"}) {
    expect_error([&] { attach_rflysim(*r, bad); },
                 "is not an ID number (expected MODEL[:ID] with ID 1..10000, e.g. x500:2, or "
                 "MODEL alone for 1)");
  }
  expect_error([&] { attach_rflysim(*r, "nope"); }, "no model 'nope' (its models: quad)");
  expect_error([&] { attach_rflysim(*r, "quad:2"); }, "has no MulticopterMotorModel");
  add_stand_in(*r, r->registry().child_by_name(r->world(), "quad"), "MulticopterMotorModel");
  attach_rflysim(*r, "quad");
  expect_error([&] { attach_rflysim(*r, "quad:3"); }, "already has an RflySim bridge");
  add_stand_in(*r, add_model(*r, "other"), "MulticopterMotorModel");
  expect_error([&] { attach_rflysim(*r, "other:1"); }, "CopterID 1 is already model 'w::quad'");
  attach_rflysim(*r, "other:2");
  // One source of commands per model: not beside an autopilot or a mission, either way round.
  expect_error([&] { attach_bridge(*r, Autopilot::kPx4, {"other", 0}); },
               "model 'w::other' is already flown by RflySim (from --rflysim other:2)");
  const ecs::Entity flown = add_model(*r, "flown");
  add_stand_in(*r, flown, "MulticopterMotorModel");
  add_stand_in(*r, flown, "Px4Bridge", "w.sdf:9");
  expect_error([&] { attach_rflysim(*r, "flown:5"); },
               "model 'w::flown' is already commanded by Px4Bridge (from w.sdf:9)");
  const ecs::Entity mission = add_model(*r, "mission");
  add_stand_in(*r, mission, "MulticopterMotorModel");
  add_stand_in(*r, mission, "MulticopterMission", "w.sdf:12");
  expect_error([&] { attach_rflysim(*r, "mission:6"); },
               "model 'w::mission' is already commanded by MulticopterMission (from w.sdf:12)");
}

}  // namespace
}  // namespace kestrel::sitl
