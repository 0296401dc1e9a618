// components::SensorFault on the rendering sensors (cameras, depth, RGBD, segmentation, gpu_lidar,
// lidar, logical camera), applied where every sensor's is (SensorSystem::update). As in
// src/sensors/common/sensor_fault_test.cc, three runs of one world stepped side by side with the
// same seed — A with faults written on its sensors, B without, C without noise: A equals B bit
// for bit outside the faults (a stopped camera renders nothing, but its noise, seeded by the
// frame count, and a stopped lidar's noise stream advance as if it had), and inside them
// differs as the fault says.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kestrel/components/camera.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::TestWorld;

// A closed grey room 6 × 6 × 4 m (visuals and collisions) lit by a white ambient light only, so a
// pixel's colour is its surface's ambient colour; a red ball falling in front of the rig.
std::string room() {
  std::string out;
  struct Wall {
    const char* name;
    const char* pose;
    const char* size;
    const char* rgb;
  };
  const Wall walls[] = {{"px", "3.5 0 2 0 0 0", "1 8 6", "0.5 0.5 0.5"},
                        {"nx", "-3.5 0 2 0 0 0", "1 8 6", "0.4 0.45 0.5"},
                        {"py", "0 3.5 2 0 0 0", "8 1 6", "0.55 0.5 0.45"},
                        {"ny", "0 -3.5 2 0 0 0", "8 1 6", "0.45 0.5 0.55"},
                        {"floor", "0 0 -0.5 0 0 0", "8 8 1", "0.5 0.55 0.5"},
                        {"roof", "0 0 4.5 0 0 0", "8 8 1", "0.5 0.5 0.55"}};
  for (const auto& w : walls) {
    const std::string geometry =
        std::string("<geometry><box><size>") + w.size + "</size></box></geometry>";
    out += std::string("<model name='") + w.name + "'><static>true</static><pose>" + w.pose +
           "</pose><link name='l'><collision name='c'>" + geometry +
           "</collision><visual name='v'>" + geometry + "<material><ambient>" + w.rgb +
           " 1</ambient><diffuse>" + w.rgb + " 1</diffuse></material></visual></link></model>";
  }
  out += R"(<model name="ball"><pose>1.5 0 1.6 0 0 0</pose><link name="l">
      <inertial><mass>1</mass><inertia><ixx>0.004</ixx><iyy>0.004</iyy><izz>0.004</izz></inertia>
      </inertial>
      <collision name="c"><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
      <visual name="v"><geometry><sphere><radius>0.1</radius></sphere></geometry>
        <material><ambient>0.6 0.3 0.3 1</ambient><diffuse>0.6 0.3 0.3 1</diffuse></material>
      </visual></link></model>)";
  return out;
}

std::string camera_body(double sd, bool noise) {
  std::string b =
      "<horizontal_fov>1.2</horizontal_fov><image><width>32</width><height>24</height></image>"
      "<clip><near>0.1</near><far>20</far></clip>";
  if (noise) {
    b += "<noise><type>gaussian</type><mean>0</mean><stddev>" + std::to_string(sd) +
         "</stddev></noise>";
  }
  return b;
}

std::string lidar_body(bool noise) {
  std::string b =
      "<lidar><scan><horizontal><samples>90</samples><min_angle>-3.1</min_angle>"
      "<max_angle>3.1</max_angle></horizontal><vertical><samples>3</samples><min_angle>-0.2"
      "</min_angle><max_angle>0.2</max_angle></vertical></scan><range><min>0.1</min>"
      "<max>30</max></range>";
  if (noise) b += "<noise><type>gaussian</type><mean>0</mean><stddev>0.02</stddev></noise>";
  return b + "</lidar>";
}

// Every rendering sensor type on a static rig at 1 m height, 100 Hz, with noise where the type
// has it (`noise` false: the noise-free twin).
std::string world(bool noise) {
  auto sensor = [](const std::string& name, const std::string& type, const std::string& body) {
    return "<sensor name='" + name + "' type='" + type + "'><update_rate>100</update_rate>" + body +
           "</sensor>";
  };
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 -9.81</gravity>
    <scene><ambient>1 1 1 1</ambient><background>0 0 0 1</background></scene>)" +
         room() + "<model name='rig'><static>true</static><pose>0 0 1 0 0 0</pose><link name='l'>" +
         sensor("cam", "camera", "<camera>" + camera_body(0.02, noise) + "</camera>") +
         sensor("depth", "depth_camera", "<camera>" + camera_body(0.01, noise) + "</camera>") +
         sensor("rgbd", "rgbd_camera", "<camera>" + camera_body(0.02, noise) + "</camera>") +
         sensor("seg", "segmentation", "<camera>" + camera_body(0, false) + "</camera>") +
         sensor("gpu", "gpu_lidar", lidar_body(noise)) + sensor("cpu", "lidar", lidar_body(noise)) +
         sensor("logical", "logical_camera",
                "<logical_camera><near>0.1</near><far>5</far><horizontal_fov>1.2</horizontal_fov>"
                "<aspect_ratio>1.33</aspect_ratio></logical_camera>") +
         "</link></model></world></sdf>";
}

struct RenderRun {
  explicit RenderRun(bool noise) : w(world(noise), 11) {
    w.runner->add_system(make_label_system(), w.find("w::ball::l::v"),
                         Element::parse("<plugin><label>5</label></plugin>"),
                         "kestrel::systems::Label", "test");
    w.add(make_rendering_system(), "kestrel::systems::Sensors");
    w.add(make_cpu_lidar_system(), "kestrel::systems::CpuLidar");
    w.add(make_logical_camera_system(), "kestrel::systems::LogicalCamera");
    w.start();
  }
  TestWorld w;
};

// How a value carries noise: an 8-bit colour channel (noise added in 0..1, rounded), a float
// depth, a double range, or none.
enum class Kind { kByte, kFloat, kDouble, kExact };
struct Channel {
  Kind kind = Kind::kExact;
  std::vector<double> v;
};
using Values = std::vector<Channel>;

Channel bytes(const c::Image& img) {
  Channel ch{Kind::kByte, {}};
  ch.v.assign(img.data.begin(), img.data.end());
  return ch;
}
Channel floats(const c::Image& img) {
  Channel ch{Kind::kFloat, std::vector<double>(img.data.size() / 4)};
  for (std::size_t i = 0; i < ch.v.size(); ++i) {
    float f;
    std::memcpy(&f, &img.data[4 * i], 4);
    ch.v[i] = f;
  }
  return ch;
}

struct Probe {
  std::string sensor;
  std::string type;
  std::function<Values(const ecs::Registry&, ecs::Entity)> values;
  std::function<std::uint64_t(const ecs::Registry&, ecs::Entity)> sequence;
  std::function<Duration(const ecs::Registry&, ecs::Entity)> stamp;
};

template <class R>
Probe probe(std::string sensor, std::string type, std::function<Values(const R&)> values) {
  return {std::move(sensor), std::move(type),
          [values](const ecs::Registry& r, ecs::Entity e) { return values(r.get<R>(e)); },
          [](const ecs::Registry& r, ecs::Entity e) { return r.get<R>(e).sequence; },
          [](const ecs::Registry& r, ecs::Entity e) { return r.get<R>(e).stamp; }};
}

std::vector<Probe> probes() {
  std::vector<Probe> p;
  p.push_back(probe<c::CameraReading>("w::rig::l::cam", "camera", [](const c::CameraReading& x) {
    return Values{bytes(x.image)};
  }));
  p.push_back(
      probe<c::CameraReading>("w::rig::l::depth", "depth_camera", [](const c::CameraReading& x) {
        // the points lie along each pixel's ray at its depth
        Channel pts{Kind::kFloat, {}};
        pts.v.assign(x.points.begin(), x.points.end());
        return Values{floats(x.image), pts};
      }));
  p.push_back(
      probe<c::CameraReading>("w::rig::l::rgbd", "rgbd_camera", [](const c::CameraReading& x) {
        return Values{bytes(x.image), floats(x.depth)};
      }));
  p.push_back(
      probe<c::CameraReading>("w::rig::l::seg", "segmentation", [](const c::CameraReading& x) {
        Channel l = bytes(x.labels), m = bytes(x.image);
        l.kind = m.kind = Kind::kExact;
        return Values{l, m};
      }));
  auto ranges = [](const c::LidarReading& x) { return Values{Channel{Kind::kDouble, x.ranges}}; };
  p.push_back(probe<c::LidarReading>("w::rig::l::gpu", "gpu_lidar", ranges));
  p.push_back(probe<c::LidarReading>("w::rig::l::cpu", "lidar", ranges));
  p.push_back(probe<c::LogicalCameraReading>(
      "w::rig::l::logical", "logical_camera", [](const c::LogicalCameraReading& x) {
        Channel ch{Kind::kExact, {double(x.models.size())}};
        for (const auto& m : x.models) {
          ch.v.insert(ch.v.end(), {m.pose.Pos().X(), m.pose.Pos().Y(), m.pose.Pos().Z()});
        }
        return Values{ch};
      }));
  return p;
}

enum class Phase { kClean, kStop, kNoise };
Phase phase_at(int steps_done) {
  if (steps_done >= 100 && steps_done < 200) return Phase::kStop;
  if (steps_done >= 300 && steps_done < 400) return Phase::kNoise;
  return Phase::kClean;
}
constexpr double kScale = 4;

// A noisy value under a noise scale s, against B (scale 1) and C (no noise): a − c = s·(b − c)
// up to the rounding of the stored type (a colour channel: up to 0.5 level in each of a, b, c,
// so |a − c − s(b − c)| ≤ 0.5 + s·0.5 + (s − 1)·0.5 levels).
void expect_scaled(const Channel& a, const Channel& b, const Channel& cl, double& sum_a,
                   double& sum_b) {
  ASSERT_EQ(a.v.size(), b.v.size());
  ASSERT_EQ(a.v.size(), cl.v.size());
  const double tol = a.kind == Kind::kByte    ? 0.5 + kScale * 0.5 + (kScale - 1) * 0.5
                     : a.kind == Kind::kFloat ? 2e-5
                                              : 1e-9;
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    if (!std::isfinite(cl.v[i])) {
      ASSERT_EQ(a.v[i], cl.v[i]) << i;
      continue;
    }
    ASSERT_NEAR(a.v[i] - cl.v[i], kScale * (b.v[i] - cl.v[i]), tol) << "value " << i;
    sum_a += (a.v[i] - cl.v[i]) * (a.v[i] - cl.v[i]);
    sum_b += (b.v[i] - cl.v[i]) * (b.v[i] - cl.v[i]);
  }
}

TEST(RenderingSensorFault, StopAndNoiseActOnEveryRenderingSensorAndRevertBitForBit) {
  RenderRun a(true), b(true), clean(false);
  const auto list = probes();
  for (const auto& p : list) {
    const auto* target = c::sensor_fault_target(p.type);
    ASSERT_NE(target, nullptr) << p.type;
    EXPECT_EQ(target->bias_size, 0) << p.type;  // no bias on an image or a range
  }
  struct State {
    ecs::Entity a = ecs::kNullEntity, b = ecs::kNullEntity, c = ecs::kNullEntity;
    Values frozen;
    std::uint64_t frozen_sequence = 0, behind = 0;
    Duration frozen_stamp{0};
    std::map<Phase, int> checked;
    double var_a = 0, var_b = 0;  // noise energy under the scale, and unscaled
  };
  std::vector<State> st;
  for (const auto& p : list) {
    State x;
    x.a = a.w.find(p.sensor);
    x.b = b.w.find(p.sensor);
    x.c = clean.w.find(p.sensor);
    st.push_back(x);
  }
  bool labelled_at_stop = false;
  for (int k = 0; k < 600; ++k) {
    const Phase phase = phase_at(k);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto* target = c::sensor_fault_target(list[i].type);
      c::SensorFault f;
      f.stopped = phase == Phase::kStop;
      if (phase == Phase::kNoise && target->noise) f.noise_scale = kScale;
      a.w.r().set<c::SensorFault>(st[i].a, f);
      if (phase == Phase::kStop && phase_at(k - 1) != Phase::kStop) {
        st[i].frozen = list[i].values(a.w.r(), st[i].a);
        if (list[i].type == "segmentation") {
          for (double label : st[i].frozen[0].v) labelled_at_stop |= label == 5;
        }
        st[i].frozen_sequence = list[i].sequence(a.w.r(), st[i].a);
        st[i].frozen_stamp = list[i].stamp(a.w.r(), st[i].a);
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
      const Values va = p.values(a.w.r(), s.a), vb = p.values(b.w.r(), s.b);
      const Values vc = p.values(clean.w.r(), s.c);
      const auto seq_a = p.sequence(a.w.r(), s.a), seq_b = p.sequence(b.w.r(), s.b);
      ASSERT_GT(seq_b, 0u);
      if (phase == Phase::kStop) {
        // No new frame: the same pixels, ranges, stamp and sequence as before the stop.
        ASSERT_EQ(seq_a, s.frozen_sequence);
        ASSERT_EQ(p.stamp(a.w.r(), s.a), s.frozen_stamp);
        for (std::size_t j = 0; j < va.size(); ++j) ASSERT_EQ(va[j].v, s.frozen[j].v);
        s.behind = seq_b - seq_a;
        ++s.checked[phase];
        continue;
      }
      ASSERT_EQ(seq_a + s.behind, seq_b);
      ASSERT_EQ(p.stamp(a.w.r(), s.a), p.stamp(b.w.r(), s.b));
      const bool scaled = phase == Phase::kNoise && c::sensor_fault_target(p.type)->noise;
      ++s.checked[scaled ? phase : Phase::kClean];
      for (std::size_t j = 0; j < va.size(); ++j) {
        SCOPED_TRACE("channel " + std::to_string(j));
        if (scaled && va[j].kind != Kind::kExact) {
          expect_scaled(va[j], vb[j], vc[j], s.var_a, s.var_b);
        } else {
          ASSERT_EQ(va[j].v, vb[j].v);  // bit for bit, after the stop too
        }
      }
    }
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    SCOPED_TRACE(list[i].sensor);
    EXPECT_EQ(st[i].behind, 10u);  // 100 ms stopped at 100 Hz
    EXPECT_EQ(st[i].checked[Phase::kStop], 10);
    if (c::sensor_fault_target(list[i].type)->noise) {
      EXPECT_EQ(st[i].checked[Phase::kNoise], 10);
      // The noise is there, and 4× larger: the energy ratio is 16 (8-bit rounding aside).
      ASSERT_GT(st[i].var_b, 0) << "no noise to scale: the check above was vacuous";
      EXPECT_NEAR(st[i].var_a / st[i].var_b, kScale * kScale, 0.1 * kScale * kScale);
    }
  }
  // The segmentation camera saw the labelled ball, and the scene moved (it fell out of view):
  // the frozen values were worth comparing.
  EXPECT_TRUE(labelled_at_stop);
  EXPECT_NE(st[3].frozen[0].v, list[3].values(a.w.r(), st[3].a)[0].v);
}

}  // namespace
}  // namespace kestrel::sensors
