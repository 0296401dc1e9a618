// Sensor cost: per sample of each sensor type (a world of 64 sensors of one type sampled every
// step, minus the same world without the sensor system, divided by 64), and a vehicle's sensor
// set (IMU 250 Hz, magnetometer 100 Hz, barometer 50 Hz, NavSat 10 Hz) added to the Gazebo
// quadcopter world, as a ratio to that world's step time. See docs/performance.md "Sensors".

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/sensors/sensors.h"
#include "kestrel/sim/runner.h"

namespace {

using namespace kestrel;

constexpr int kSensors = 64;

std::string world(const std::string& type, const std::string& body) {
  std::string s = R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <spherical_coordinates><surface_model>EARTH_WGS84</surface_model>
    <world_frame_orientation>ENU</world_frame_orientation><latitude_deg>47.4</latitude_deg>
    <longitude_deg>8.5</longitude_deg><elevation>400</elevation><heading_deg>0</heading_deg>
    </spherical_coordinates><model name="m"><static>true</static><link name="l">
    <collision name="c"><geometry><box><size>0.1 0.1 0.1</size></box></geometry></collision>)";
  for (int i = 0; i < kSensors; ++i) {
    s += "<sensor name=\"s" + std::to_string(i) + "\" type=\"" + type +
         "\"><update_rate>0</update_rate>" + body + "</sensor>";
  }
  return s + "</link></model></world></sdf>";
}

std::unique_ptr<System> (*factory(const std::string& t))() {
  if (t == "imu") return &sensors::make_imu_system;
  if (t == "magnetometer") return &sensors::make_magnetometer_system;
  if (t == "air_pressure") return &sensors::make_air_pressure_system;
  if (t == "altimeter") return &sensors::make_altimeter_system;
  if (t == "navsat") return &sensors::make_navsat_system;
  if (t == "air_speed") return &sensors::make_air_speed_system;
  return &sensors::make_contact_system;
}

void run(benchmark::State& state, const std::string& type, const std::string& body, bool with) {
  sim::Runner::Options o;
  o.real_time_factor = 0;
  sim::Runner r(o);
  sdf::load_world_string(world(type, body), r.registry(), r.world());
  r.add_system(physics::make_physics_system(), r.world(), nullptr, "Physics", "bench");
  if (with) r.add_system(factory(type)(), r.world(), nullptr, type, "bench");
  r.configure();
  for (auto _ : state) r.step_once();
  state.counters["sensors"] = with ? kSensors : 0;
}

#define SENSOR_BENCH(type, body)                                                         \
  static void BM_##type##_64(benchmark::State& s) { run(s, #type, body, true); }       \
  static void BM_##type##_none(benchmark::State& s) { run(s, #type, body, false); }    \
  BENCHMARK(BM_##type##_64);                                                            \
  BENCHMARK(BM_##type##_none)

SENSOR_BENCH(imu, "<imu><linear_acceleration><x><noise type=\"gaussian\"><stddev>0.01</stddev>"
                  "</noise></x></linear_acceleration></imu>");
SENSOR_BENCH(magnetometer, "");
SENSOR_BENCH(air_pressure, "");
SENSOR_BENCH(altimeter, "");
SENSOR_BENCH(navsat, "<navsat><position_sensing><horizontal><noise type=\"gaussian\">"
                     "<stddev>1</stddev></noise></horizontal></position_sensing></navsat>");
SENSOR_BENCH(air_speed, "");
SENSOR_BENCH(contact, "<contact><collision>c</collision></contact>");

// The quadcopter world with and without a vehicle's sensor set on its base link.
void quad(benchmark::State& state, bool with) {
  const std::filesystem::path file =
      std::filesystem::path(KESTREL_SHARED_DIR) / "worlds/gz/test_quadcopter.sdf";
  if (!std::filesystem::exists(file)) {
    state.SkipWithError("../shared/worlds/gz/test_quadcopter.sdf is absent");
    return;
  }
  sim::Runner::Options o;
  o.real_time_factor = 0;
  sim::Runner r(o);
  sdf::load_world_file(file, r.registry(), r.world());
  r.set_step_size(r.registry().get<components::PhysicsParams>(r.world()).max_step_size);
  r.add_system(physics::make_physics_system(), r.world(), nullptr, "Physics", "bench");
  if (with) {
    // Sensors on the first link that has a parent model (the vehicle's base link).
    ecs::Entity link = ecs::kNullEntity;
    r.registry().each<components::Link>([&](ecs::Entity e, const components::Link&) {
      const auto* st = r.registry().try_get<components::Static>(r.registry().parent(e));
      if (link == ecs::kNullEntity && !(st && st->value)) link = e;
    });
    const std::pair<const char*, double> set[] = {
        {"imu", 250}, {"magnetometer", 100}, {"air_pressure", 50}, {"navsat", 10}};
    if (!r.registry().has<components::SphericalCoordinates>(r.world())) {
      r.registry().add<components::SphericalCoordinates>(r.world());
    }
    for (auto [type, rate] : set) {
      const ecs::Entity s = r.registry().create(link);
      r.registry().add<components::Name>(s, std::string("bench_") + type);
      r.registry().add<components::Pose>(s);
      components::Sensor sensor;
      sensor.type = type;
      sensor.update_rate = rate;
      sensor.element = Element::parse(std::string("<sensor type=\"") + type + "\"/>");
      r.registry().add<components::Sensor>(s, sensor);
      r.add_system(factory(type)(), r.world(), nullptr, type, "bench");
    }
  }
  r.configure();
  for (auto _ : state) r.step_once();
}
static void BM_quadcopter_world(benchmark::State& s) { quad(s, false); }
static void BM_quadcopter_world_with_sensor_set(benchmark::State& s) { quad(s, true); }
BENCHMARK(BM_quadcopter_world);
BENCHMARK(BM_quadcopter_world_with_sensor_set);

}  // namespace

BENCHMARK_MAIN();
