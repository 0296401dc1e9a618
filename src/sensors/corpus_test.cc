// The Gazebo sensor test worlds (../shared/worlds/gz/test_*.sdf) run with Kestrel's sensor
// systems and produce plausible readings.

#include <gtest/gtest.h>

#include <filesystem>

#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/sensors/environment.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::TestWorld;

std::unique_ptr<TestWorld> load(const char* name) {
  const std::filesystem::path file = std::filesystem::path(KESTREL_SHARED_DIR) / "worlds/gz" / name;
  if (!std::filesystem::exists(file)) return nullptr;
  auto w = std::make_unique<TestWorld>(TestWorld::FromFile{}, file, 0);
  for (auto make : {&make_imu_system, &make_magnetometer_system, &make_air_pressure_system,
                    &make_altimeter_system, &make_navsat_system, &make_air_speed_system}) {
    w->add(make());
  }
  w->start();
  return w;
}

#define LOAD_OR_SKIP(var, name)                                                    \
  auto var = load(name);                                                           \
  if (!var) GTEST_SKIP() << "the Gazebo corpus (" KESTREL_SHARED_DIR "/worlds/gz/" \
                         << name << ") is absent"

TEST(GazeboWorlds, TestImuFallsThenRestsOnTheGround) {
  LOAD_OR_SKIP(w, "test_imu.sdf");
  const ecs::Entity e = w->r().find_scoped(w->desc.name + "::imu_model::link::imu_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& imu = w->r().get<c::ImuReading>(e);
  w->step(300);  // 0.3 s of free fall from 3 m: specific force ~0
  EXPECT_GT(imu.sequence, 0u);
  EXPECT_LT(imu.linear_acceleration.Length(), 0.05) << imu.linear_acceleration;
  w->step(1700);  // landed
  // Mean over the samples of the last second (MuJoCo's soft contact keeps a small jitter).
  double fz = 0;
  int n = 0;
  for (std::uint64_t seq = imu.sequence; n < 30;) {
    w->step();
    if (imu.sequence == seq) continue;
    seq = imu.sequence;
    fz += imu.linear_acceleration.Z();
    ++n;
  }
  EXPECT_NEAR(fz / n, 5.0, 0.1);  // this world's <gravity> is 0 0 -5
  EXPECT_EQ(imu.sequence, 90u);  // 30 Hz for 3 s
  EXPECT_EQ(w->r().get<c::SensorTopic>(e).topic,
            "/world/" + w->desc.name + "/model/imu_model/link/link/sensor/imu_sensor/imu");
}

TEST(GazeboWorlds, TestMagnetometerReadsTheWorldFieldRotated) {
  LOAD_OR_SKIP(w, "test_magnetometer.sdf");
  w->step(1000);
  const ecs::Entity e =
      w->r().find_scoped(w->desc.name + "::magnetometer_model::link::magnetometer_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& m = w->r().get<c::MagnetometerReading>(e);
  EXPECT_EQ(m.sequence, 10u);
  const auto& B = w->r().get<c::MagneticField>(w->runner->world()).value;
  EXPECT_NEAR(m.field.Length(), B.Length(), 1e-9);
  EXPECT_NEAR(m.field.Z(), B.Z(), 1e-7);  // yawed only (until it tips over, it does not)
}

TEST(GazeboWorlds, TestAirPressureAtReferenceAltitude) {
  LOAD_OR_SKIP(w, "test_air_pressure.sdf");
  w->step(100);
  const ecs::Entity e =
      w->r().find_scoped(w->desc.name + "::air_pressure_model::link::air_pressure_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& p = w->r().get<c::AirPressureReading>(e);
  EXPECT_EQ(p.sequence, 3u);
  // reference_altitude 123 m + z 3.05 m.
  EXPECT_NEAR(p.pressure, standard_atmosphere(126.05).pressure, 1e-6);
  EXPECT_NEAR(p.pressure, 99825, 30);
}

TEST(GazeboWorlds, TestAltimeterFallsAndLands) {
  LOAD_OR_SKIP(w, "test_altimeter.sdf");
  const ecs::Entity e = w->r().find_scoped(w->desc.name + "::altimeter_model::link::altimeter_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& a = w->r().get<c::AltimeterReading>(e);
  w->step(400);
  EXPECT_NEAR(a.vertical_velocity, -9.8 * 0.4, 0.05);
  w->step(2600);
  EXPECT_NEAR(a.vertical_reference, 3.05, 1e-9);
  // Resting on z = 0: the link origin (= sensor) 0.05 m above the ground, started at 3.05 m.
  EXPECT_NEAR(a.vertical_position, 0.05 - 3.05, 0.02);
  EXPECT_NEAR(a.vertical_velocity, 0, 0.05);
}

TEST(GazeboWorlds, TestNavSatAtItsOrigin) {
  LOAD_OR_SKIP(w, "test_navsat.sdf");
  w->step(5);  // 0.1 s on this world's 20 ms step
  const ecs::Entity e = w->r().find_scoped(w->desc.name + "::navsat_model::link::navsat_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& g = w->r().get<c::NavSatReading>(e);
  EXPECT_EQ(g.sequence, 3u);
  EXPECT_NEAR(g.latitude_deg, -22.9, 1e-5);
  EXPECT_NEAR(g.longitude_deg, -43.2, 1e-5);
  EXPECT_LT(g.velocity_enu.Z(), 0);  // free-falling (no ground in this world)
}

TEST(GazeboWorlds, TestAirSpeedStillAirReadsZero) {
  LOAD_OR_SKIP(w, "test_air_speed.sdf");
  w->step(100);
  const ecs::Entity e = w->r().find_scoped(w->desc.name + "::air_speed_model::link::air_speed_sensor");
  ASSERT_NE(e, ecs::kNullEntity);
  const auto& a = w->r().get<c::AirSpeedReading>(e);
  EXPECT_EQ(a.sequence, 3u);
  EXPECT_EQ(a.diff_pressure, 0.0);
  EXPECT_NEAR(a.temperature, 288.15 - 0.0065 * 3.05, 1e-3);
}

}  // namespace
}  // namespace kestrel::sensors
