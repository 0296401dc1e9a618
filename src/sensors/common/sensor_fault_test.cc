// components::SensorFault as every sensor system applies it (SensorSystem::update): three runs
// of one world with every sensor type, stepped side by side with the same seed — A with faults
// written on its sensors, B the same world without faults, C the same world without noise. A
// must equal B outside the faults (bit for bit: the noise streams never shift), and inside them
// differ exactly as the fault says.

#include <gtest/gtest.h>

#include <GeographicLib/LocalCartesian.hpp>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_sdf.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using ignition::math::Vector3d;
using testing::TestWorld;

using testing::kH0;
using testing::kLat0;
using testing::kLon0;

std::string noise(double sd, const std::string& type) {
  return testing::noise_xml(sd, type, true);  // every standard deviation a scale multiplies
}
std::string xyz(double sd, const std::string& type) {
  return testing::xyz_noise_xml(sd, type, true);
}

// A crate dropped on the ground with every link sensor type on it, a pendulum with a
// force-torque sensor, wind for the pitot; every sensor at 100 Hz.
std::string world(const std::string& type) {
  auto sensor = [](const std::string& name, const std::string& kind, const std::string& body) {
    return testing::sensor_xml(name, kind, 100, body);
  };
  return std::string(testing::kWorldHead) + R"(
    <wind><linear_velocity>3 1 0</linear_velocity></wind>
    <model name="ground"><static>true</static><link name="l">
      <collision name="plane"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
    </link></model>
    <model name="crate"><pose>0 0 0.3 0.1 0 0.4</pose><link name="body">
      <inertial><mass>1.5</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
      </inertial>
      <collision name="c"><geometry><box><size>0.2 0.2 0.2</size></box></geometry></collision>)" +
         sensor("imu_a", "imu",
                "<imu><angular_velocity>" + xyz(0.01, type) +
                    "</angular_velocity><linear_acceleration>" + xyz(0.05, type) +
                    "</linear_acceleration></imu>") +
         sensor("mag", "magnetometer", "<magnetometer>" + xyz(1e-7, type) + "</magnetometer>") +
         sensor("baro", "air_pressure",
                "<air_pressure><pressure>" + noise(2, type) + "</pressure></air_pressure>") +
         sensor("alt", "altimeter",
                "<altimeter><vertical_position>" + noise(0.1, type) +
                    "</vertical_position><vertical_velocity>" + noise(0.05, type) +
                    "</vertical_velocity></altimeter>") +
         sensor("gps", "navsat",
                "<navsat><position_sensing><horizontal>" + noise(1, type) +
                    "</horizontal><vertical>" + noise(2, type) +
                    "</vertical></position_sensing><velocity_sensing><horizontal>" +
                    noise(0.1, type) + "</horizontal><vertical>" + noise(0.2, type) +
                    "</vertical></velocity_sensing></navsat>") +
         sensor("pitot", "air_speed",
                "<air_speed><pressure>" + noise(0.5, type) + "</pressure></air_speed>") +
         sensor("touch", "contact", "<contact><collision>c</collision></contact>") +
         R"(</link></model>
    <model name="pendulum"><pose>2 0 2 0 0 0</pose><link name="bob">
      <pose>0 0.3 -0.4 0 0 0</pose>
      <inertial><mass>2</mass><inertia><ixx>0.01</ixx><iyy>0.01</iyy><izz>0.01</izz></inertia>
      </inertial></link>
      <joint name="hinge" type="revolute"><parent>world</parent><child>bob</child>
        <axis><xyz>1 0 0</xyz></axis>)" +
         sensor("ft", "force_torque",
                "<force_torque><force>" + xyz(0.5, type) + "</force><torque>" + xyz(0.1, type) +
                    "</torque></force_torque>") +
         "</joint></model></world></sdf>";
}

// One sensor's reading as numbers, with what a fault does to them.
struct Probe {
  std::string sensor;  // scoped name
  std::string type;    // SDF type
  std::function<std::vector<double>(const ecs::Registry&, ecs::Entity)> values;
  std::function<std::uint64_t(const ecs::Registry&, ecs::Entity)> sequence;
  std::function<Duration(const ecs::Registry&, ecs::Entity)> stamp;
  std::vector<int> bias_at;  // value index of each bias component
  std::vector<int> noisy;    // value indices that carry noise
  double tolerance = 0;      // 0: bit for bit
};

template <class R>
Probe probe(std::string sensor, std::string type,
            std::function<std::vector<double>(const R&)> values, std::vector<int> bias_at,
            std::vector<int> noisy, double tolerance = 0) {
  Probe p;
  p.sensor = std::move(sensor);
  p.type = std::move(type);
  p.values = [values](const ecs::Registry& r, ecs::Entity e) { return values(r.get<R>(e)); };
  p.sequence = [](const ecs::Registry& r, ecs::Entity e) { return r.get<R>(e).sequence; };
  p.stamp = [](const ecs::Registry& r, ecs::Entity e) { return r.get<R>(e).stamp; };
  p.bias_at = std::move(bias_at);
  p.noisy = std::move(noisy);
  p.tolerance = tolerance;
  return p;
}

std::vector<double> v3(std::vector<double> out, const Vector3d& v) {
  out.insert(out.end(), {v.X(), v.Y(), v.Z()});
  return out;
}

std::vector<Probe> probes() {
  std::vector<Probe> p;
  p.push_back(probe<c::ImuReading>("w::crate::body::imu_a", "imu",
                                   [](const c::ImuReading& r) {
                                     auto v = v3(v3({}, r.linear_acceleration), r.angular_velocity);
                                     v.insert(v.end(), {r.orientation.W(), r.orientation.X(),
                                                        r.orientation.Y(), r.orientation.Z()});
                                     return v;
                                   },
                                   {0, 1, 2}, {0, 1, 2, 3, 4, 5}));
  p.push_back(probe<c::MagnetometerReading>(
      "w::crate::body::mag", "magnetometer",
      [](const c::MagnetometerReading& r) { return v3({}, r.field); }, {0, 1, 2}, {0, 1, 2}));
  p.push_back(probe<c::AirPressureReading>(
      "w::crate::body::baro", "air_pressure",
      [](const c::AirPressureReading& r) { return std::vector<double>{r.pressure}; }, {0}, {0}));
  p.push_back(probe<c::AltimeterReading>(
      "w::crate::body::alt", "altimeter",
      [](const c::AltimeterReading& r) {
        return std::vector<double>{r.vertical_position, r.vertical_velocity};
      },
      {0}, {0, 1}));
  // Position east, north, up from the world origin [m] (the frame of the noise and the bias):
  // equal to 1e-6 m through the geodetic conversion and back.
  p.push_back(probe<c::NavSatReading>(
      "w::crate::body::gps", "navsat",
      [](const c::NavSatReading& r) {
        const GeographicLib::LocalCartesian origin(kLat0, kLon0, kH0);
        double e, n, u;
        origin.Forward(r.latitude_deg, r.longitude_deg, r.altitude, e, n, u);
        return v3({e, n, u}, r.velocity_enu);
      },
      {0, 1, 2}, {0, 1, 2, 3, 4, 5}, 1e-6));
  p.push_back(probe<c::AirSpeedReading>(
      "w::crate::body::pitot", "air_speed",
      [](const c::AirSpeedReading& r) {
        return std::vector<double>{r.diff_pressure, r.temperature, r.density};
      },
      {0}, {0}));
  p.push_back(probe<c::ForceTorqueReading>(
      "w::pendulum::hinge::ft", "force_torque",
      [](const c::ForceTorqueReading& r) { return v3(v3({}, r.force), r.torque); }, {0, 1, 2},
      {0, 1, 2, 3, 4, 5}));
  p.push_back(probe<c::ContactReading>(
      "w::crate::body::touch", "contact",
      [](const c::ContactReading& r) {
        std::vector<double> v{double(r.contacts.size()), double(r.began.size()),
                              double(r.ended.size())};
        for (const auto& k : r.contacts) {
          for (std::size_t i = 0; i < k.positions.size(); ++i) {
            v = v3(v3(v3(v, k.positions[i]), k.normals[i]), k.forces[i]);
            v.push_back(k.depths[i]);
          }
        }
        return v;
      },
      {}, {}));
  return p;
}

struct AllSensors {
  explicit AllSensors(const std::string& sdf) : w(sdf, 7) {
    for (auto make : {make_imu_system, make_magnetometer_system, make_air_pressure_system,
                      make_altimeter_system, make_navsat_system, make_air_speed_system,
                      make_force_torque_system, make_contact_system}) {
      w.add(make());
    }
    w.start();
  }
  TestWorld w;
};

// The phases of the test, by completed steps (the fault is written before the next step).
enum class Phase { kClean, kStop, kBias, kNoise, kNoFix };
Phase phase_at(int steps_done) {
  if (steps_done >= 200 && steps_done < 300) return Phase::kStop;
  if (steps_done >= 400 && steps_done < 500) return Phase::kBias;
  if (steps_done >= 600 && steps_done < 700) return Phase::kNoise;
  if (steps_done >= 800 && steps_done < 900) return Phase::kNoFix;
  return Phase::kClean;
}
constexpr double kScale = 4;
const Vector3d kBias(0.5, -0.25, 2);

bool near(double a, double b, double tol) {
  return tol == 0 ? a == b : std::abs(a - b) <= tol * (1 + std::abs(b));
}

TEST(SensorFault, EveryFaultActsOnEverySensorTypeAndRevertsBitForBit) {
  AllSensors a(world("gaussian")), b(world("gaussian")), clean(world("none"));
  const auto list = probes();
  // Each probe's type takes the bias the table says, on as many values.
  for (const auto& p : list) {
    const auto* target = c::sensor_fault_target(p.type);
    ASSERT_NE(target, nullptr) << p.type;
    EXPECT_EQ(static_cast<std::size_t>(target->bias_size), p.bias_at.size()) << p.type;
    EXPECT_EQ(target->noise, !p.noisy.empty()) << p.type;
  }
  struct State {
    ecs::Entity a = ecs::kNullEntity, b = ecs::kNullEntity, c = ecs::kNullEntity;
    std::vector<double> frozen;
    std::uint64_t frozen_sequence = 0, behind = 0;
    Duration frozen_stamp{0};
    std::map<Phase, int> checked;  // samples checked per phase
    bool noise_seen = false;       // B differs from the noise-free run somewhere
  };
  std::vector<State> st;
  for (const auto& p : list) {
    State x;
    x.a = a.w.find(p.sensor);
    x.b = b.w.find(p.sensor);
    x.c = clean.w.find(p.sensor);
    st.push_back(x);
  }
  for (int k = 0; k < 1000; ++k) {
    const Phase phase = phase_at(k);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& p = list[i];
      auto& s = st[i];
      c::SensorFault f;
      if (phase == Phase::kStop) f.stopped = true;
      if (phase == Phase::kBias && !p.bias_at.empty()) f.bias = kBias;
      if (phase == Phase::kNoise && !p.noisy.empty()) f.noise_scale = kScale;
      if (phase == Phase::kNoFix && p.type == "navsat") f.no_fix = true;
      a.w.r().set<c::SensorFault>(s.a, f);
      if (phase == Phase::kStop && phase_at(k - 1) != Phase::kStop) {
        s.frozen = p.values(a.w.r(), s.a);
        s.frozen_sequence = p.sequence(a.w.r(), s.a);
        s.frozen_stamp = p.stamp(a.w.r(), s.a);
      }
    }
    a.w.step();
    b.w.step();
    clean.w.step();
    if ((k + 1) % 10 != 0) continue;  // a 100 Hz sample was taken in this step
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& p = list[i];
      auto& s = st[i];
      SCOPED_TRACE(p.sensor + " after step " + std::to_string(k + 1));
      const auto va = p.values(a.w.r(), s.a), vb = p.values(b.w.r(), s.b);
      const auto vc = p.values(clean.w.r(), s.c);
      const auto seq_a = p.sequence(a.w.r(), s.a), seq_b = p.sequence(b.w.r(), s.b);
      for (int j : p.noisy) s.noise_seen = s.noise_seen || vb[j] != vc[j];
      const bool navsat = p.type == "navsat";
      const bool faulted = phase == Phase::kStop || (phase == Phase::kBias && !p.bias_at.empty()) ||
                           (phase == Phase::kNoise && !p.noisy.empty()) ||
                           (phase == Phase::kNoFix && navsat);
      ++s.checked[faulted ? phase : Phase::kClean];
      if (phase == Phase::kStop) {
        // Nothing new: the same values, stamp and sequence as before the stop.
        ASSERT_EQ(va, s.frozen);
        ASSERT_EQ(seq_a, s.frozen_sequence);
        ASSERT_EQ(p.stamp(a.w.r(), s.a), s.frozen_stamp);
        s.behind = seq_b - seq_a;
        continue;
      }
      ASSERT_EQ(va.size(), vb.size());
      // Every sample after the stop is counted again; the 10 discarded are missing.
      ASSERT_EQ(seq_a + s.behind, seq_b);
      ASSERT_EQ(p.stamp(a.w.r(), s.a), p.stamp(b.w.r(), s.b));
      if (phase == Phase::kNoFix && navsat) {
        const auto& g = a.w.r().get<c::NavSatReading>(s.a);
        ASSERT_FALSE(g.fix);
        ASSERT_TRUE(std::isnan(g.latitude_deg) && std::isnan(g.longitude_deg) &&
                    std::isnan(g.altitude) && std::isnan(g.velocity_enu.X()));
        continue;
      }
      if (navsat) {
        ASSERT_TRUE(a.w.r().get<c::NavSatReading>(s.a).fix);
      }
      for (std::size_t j = 0; j < va.size(); ++j) {
        double expected = vb[j];
        if (phase == Phase::kBias) {
          for (std::size_t m = 0; m < p.bias_at.size(); ++m) {
            if (p.bias_at[m] == static_cast<int>(j)) expected = vb[j] + kBias[m];
          }
        }
        const bool noisy =
            phase == Phase::kNoise &&
            std::find(p.noisy.begin(), p.noisy.end(), static_cast<int>(j)) != p.noisy.end();
        if (noisy) {
          // Means are zero: every noise term is scaled, the truth is not.
          ASSERT_NEAR(va[j] - vc[j], kScale * (vb[j] - vc[j]),
                      1e-9 * (1 + std::abs(vc[j])) + p.tolerance * 10)
              << "value " << j;
        } else {
          ASSERT_TRUE(near(va[j], expected, p.tolerance))
              << "value " << j << ": " << va[j] << " vs " << expected;
        }
      }
    }
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    SCOPED_TRACE(list[i].sensor);
    EXPECT_EQ(st[i].behind, 10u);  // 100 ms stopped at 100 Hz
    EXPECT_EQ(st[i].checked[Phase::kStop], 10);
    if (!list[i].bias_at.empty()) {
      EXPECT_EQ(st[i].checked[Phase::kBias], 10);
    }
    if (!list[i].noisy.empty()) {
      EXPECT_EQ(st[i].checked[Phase::kNoise], 10);
      EXPECT_TRUE(st[i].noise_seen) << "no noise to scale: the check above was vacuous";
    }
  }
  EXPECT_EQ(st[4].checked[Phase::kNoFix], 10);
  // The crate landed: the contact sensor had something to report.
  EXPECT_GT(a.w.r().get<c::ContactReading>(st[7].a).contacts.size(), 0u);
}

TEST(SensorFault, TheIssuesExampleShiftsZByFiveAndAStoppedImuPublishesNothing) {
  AllSensors a(world("none"));
  const ecs::Entity imu = a.w.find("w::crate::body::imu_a");
  a.w.step(1000);  // at rest on the ground
  const auto& r = a.w.r().get<c::ImuReading>(imu);
  const Vector3d before = r.linear_acceleration;
  // +g up in the sensor frame (the sensor sits at the link origin, unrotated; its orientation
  // reading is relative to its initial one, as Gazebo's without <orientation_reference_frame>).
  const auto g_S = a.w.r()
                       .get<c::WorldPose>(a.w.find("w::crate::body"))
                       .value.Rot()
                       .RotateVectorReverse({0, 0, 9.81});
  EXPECT_NEAR((before - g_S).Length(), 0, 1e-2);
  c::SensorFault bias;
  bias.bias = {0, 0, 5};
  a.w.r().set(imu, bias);
  a.w.step(10);
  EXPECT_NEAR(r.linear_acceleration.Z() - before.Z(), 5.0, 1e-2);
  a.w.r().set(imu, c::SensorFault{});
  a.w.step(10);
  EXPECT_NEAR((r.linear_acceleration - before).Length(), 0, 1e-2);
  c::SensorFault stop;
  stop.stopped = true;
  a.w.r().set(imu, stop);
  const auto seq = r.sequence;
  a.w.step(100);
  EXPECT_EQ(r.sequence, seq);
  a.w.r().set(imu, c::SensorFault{});
  a.w.step(10);
  EXPECT_EQ(r.sequence, seq + 1);
}

}  // namespace
}  // namespace kestrel::sensors
