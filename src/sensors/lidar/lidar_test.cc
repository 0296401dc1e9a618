// Lidars against analytic truth: a ring lidar at the centre of a square room reads
// min(d/|cos a|, d/|sin a|); gpu_lidar sees visuals, lidar/ray see collisions; inclusive angles,
// +inf misses, noise then clamp; thread-count independence; the point cloud's geometry.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <sstream>

#include "kestrel/components/camera.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/test_util.h"
#include "sensors/common/test_world.h"

namespace kestrel::sensors {
namespace {

namespace c = components;
using testing::TestWorld;

// Four walls whose inner faces are `dv` m (visuals) and `dc` m (collisions) from the origin.
std::string square_room(double dv, double dc) {
  std::string out;
  const char* names[] = {"px", "nx", "py", "ny"};
  for (int k = 0; k < 4; ++k) {
    const double sx = k % 2 == 0 ? 1 : -1;
    auto pose = [&](double d) {
      const double c0 = (d + 0.5) * sx;
      return k < 2 ? std::to_string(c0) + " 0 0 0 0 0" : "0 " + std::to_string(c0) + " 0 0 0 0";
    };
    const std::string size = k < 2 ? "1 40 10" : "40 1 10";
    out += std::string("<model name='") + names[k] + "'><static>true</static><link name='l'>" +
           "<visual name='v'><pose>" + pose(dv) + "</pose><geometry><box><size>" + size +
           "</size></box></geometry></visual><collision name='c'><pose>" + pose(dc) +
           "</pose><geometry><box><size>" + size + "</size></box></geometry></collision>" +
           "</link></model>";
  }
  return out;
}

std::string lidar_world(const std::string& type, const std::string& ray_body,
                        const std::string& extra) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.01</max_step_size></physics>)" +
         extra + "<model name='m'><static>true</static><link name='l'><sensor name='s' type='" +
         type + "'><update_rate>10</update_rate><lidar>" + ray_body +
         "</lidar></sensor></link></model></world></sdf>";
}

std::string num(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

std::string ring(int n, double lo, double hi, double rmin, double rmax,
                 const std::string& noise = "", int rings = 1, double vlo = 0, double vhi = 0) {
  return "<scan><horizontal><samples>" + std::to_string(n) + "</samples><min_angle>" + num(lo) +
         "</min_angle><max_angle>" + num(hi) + "</max_angle></horizontal><vertical><samples>" +
         std::to_string(rings) + "</samples><min_angle>" + num(vlo) + "</min_angle><max_angle>" +
         num(vhi) + "</max_angle></vertical></scan><range><min>" + num(rmin) + "</min><max>" +
         num(rmax) + "</max></range>" + noise;
}

c::LidarReading scan_of(const std::string& sdf, bool gpu, unsigned threads = 0) {
  TestWorld w(sdf);
  w.r().set<c::RenderSettings>(w.runner->world(), {true, threads});
  w.add(gpu ? make_rendering_system() : make_cpu_lidar_system(), "lidar system");
  w.start(false);
  w.step(10);
  return w.r().get<c::LidarReading>(w.find("w::m::l::s"));
}

void expect_square(const c::LidarReading& x, double d) {
  ASSERT_EQ(x.ranges.size(), x.count);
  for (std::uint32_t i = 0; i < x.count; ++i) {
    const double a = x.angle_min + i * x.angle_step;
    const double truth = std::min(d / std::abs(std::cos(a)), d / std::abs(std::sin(a)));
    ASSERT_NEAR(x.ranges[i], truth, 1e-4 * truth) << "ray " << i << " at " << a << " rad";
  }
}

TEST(Lidar, RingInASquareRoomReadsTheAnalyticRange) {
  const double pi = std::numbers::pi;
  // gpu_lidar sees the visuals (3 m), lidar the collisions (2 m).
  const auto gpu =
      scan_of(lidar_world("gpu_lidar", ring(721, -pi, pi, 0.1, 30), square_room(3, 2)), true);
  EXPECT_EQ(gpu.count, 721u);
  EXPECT_DOUBLE_EQ(gpu.angle_step, 2 * pi / 720);  // inclusive: (max − min)/(n − 1)
  EXPECT_DOUBLE_EQ(gpu.angle_min, -pi);
  EXPECT_DOUBLE_EQ(gpu.angle_max, pi);
  expect_square(gpu, 3);
  const auto cpu =
      scan_of(lidar_world("lidar", ring(721, -pi, pi, 0.1, 30), square_room(3, 2)), false);
  expect_square(cpu, 2);
  const auto ray =
      scan_of(lidar_world("ray", ring(360, -pi, pi, 0.1, 30), square_room(3, 2)), false);
  expect_square(ray, 2);
}

TEST(Lidar, MissesAreInfinityAndRingsGoUpward) {
  const double pi = std::numbers::pi;
  // Range 2.5 in a 3 m room: the axes miss, the diagonals would be farther still.
  const auto x =
      scan_of(lidar_world("gpu_lidar", ring(16, -pi, pi, 0.1, 2.5), square_room(3, 3)), true);
  for (double r : x.ranges) EXPECT_EQ(r, std::numeric_limits<double>::infinity());
  // Two rings, at -0.2 and +0.2 rad: ring by ring from the lowest; a floor only below.
  const auto v = scan_of(
      lidar_world("gpu_lidar", ring(4, 0, 0.3, 0.1, 30, "", 2, -0.2, 0.2),
                  "<model name='floor'><static>true</static><link name='l'><visual name='v'>"
                  "<pose>0 0 -1.5 0 0 0</pose><geometry><box><size>100 100 1</size></box>"
                  "</geometry></visual></link></model>"),
      true);
  ASSERT_EQ(v.ranges.size(), 8u);
  EXPECT_EQ(v.vertical_count, 2u);
  EXPECT_DOUBLE_EQ(v.vertical_angle_step, 0.4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(v.ranges[i], 1.0 / std::sin(0.2), 1e-4);  // the lower ring meets the floor
    EXPECT_EQ(v.ranges[4 + i], std::numeric_limits<double>::infinity());
  }
}

TEST(Lidar, NoiseIsAppliedThenClamped) {
  const double pi = std::numbers::pi;
  const std::string noisy =
      "<noise><type>gaussian</type><mean>0</mean><stddev>0.5</stddev></noise>";
  const auto x = scan_of(
      lidar_world("gpu_lidar", ring(2000, -0.3, 0.3, 1.0, 3.2, noisy), square_room(3, 3)), true);
  std::size_t at_min = 0, at_max = 0, between = 0, inf = 0;
  for (double r : x.ranges) {
    if (std::isinf(r)) {
      ++inf;
    } else {
      ASSERT_GE(r, 1.0);
      ASSERT_LE(r, 3.2);
      at_min += r == 1.0;
      at_max += r == 3.2;
      between += r > 1.0 && r < 3.2;
    }
  }
  EXPECT_GT(at_max, 200u);  // ~1/3 of N(3.0..3.14, 0.5) land beyond 3.2 and are clamped
  EXPECT_GT(between, 1000u);
  EXPECT_EQ(inf, 0u);  // every ray hits within range before the noise
  (void)pi;
  // The same seed gives the same scan; statistics of the noise about the truth.
  const std::string small =
      "<noise><type>gaussian</type><mean>0.05</mean><stddev>0.01</stddev></noise>";
  const auto a = scan_of(
      lidar_world("lidar", ring(4000, -0.5, 0.5, 0.1, 30, small), square_room(3, 3)), false, 1);
  const auto b = scan_of(
      lidar_world("lidar", ring(4000, -0.5, 0.5, 0.1, 30, small), square_room(3, 3)), false, 3);
  EXPECT_EQ(a.ranges, b.ranges);
  double sum = 0, sq = 0;
  for (std::uint32_t i = 0; i < a.count; ++i) {
    const double angle = a.angle_min + i * a.angle_step;
    const double e = a.ranges[i] - 3 / std::cos(angle);
    sum += e;
    sq += e * e;
  }
  const double mean = sum / a.count, sd = std::sqrt(sq / a.count - mean * mean);
  EXPECT_NEAR(mean, 0.05, 5 * 0.01 / std::sqrt(4000.0));
  EXPECT_NEAR(sd, 0.01, 0.001);
}

TEST(Lidar, TopicsAndErrors) {
  TestWorld w(lidar_world("lidar", ring(8, -1, 1, 0.1, 5), ""));
  w.add(make_cpu_lidar_system(), "CpuLidar");
  testing::LogCapture log;
  w.start(false);
  const auto& t = w.r().get<c::LidarTopics>(w.find("w::m::l::s"));
  EXPECT_EQ(t.scan, "/world/w/model/m/link/l/sensor/s/lidar");
  EXPECT_EQ(t.points, "/world/w/model/m/link/l/sensor/s/lidar/points");
  EXPECT_THAT(log.lines(), ::testing::Contains(::testing::HasSubstr(
                               "lidar m::l::s sees nothing from its pose (no collision within "
                               "0.1..5 m)")));
  TestWorld g(lidar_world("gpu_lidar", ring(8, -1, 1, 0.1, 5), ""));
  g.add(make_rendering_system(), "Sensors");
  g.start(false);
  EXPECT_EQ(g.r().get<c::LidarTopics>(g.find("w::m::l::s")).scan,
            "/world/w/model/m/link/l/sensor/s/scan");
  auto fails = [](const std::string& body, const std::string& what) {
    TestWorld b(lidar_world("gpu_lidar", body, ""));
    b.add(make_rendering_system(), "Sensors");
    try {
      b.start(false);
      ADD_FAILURE() << "no error for " << body;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(what));
    }
  };
  fails(ring(8, 1, -1, 0.1, 5), "<max_angle> (-1.000000) is less than <min_angle>");
  fails(ring(8, -1, 1, 5, 1), "<range> needs 0 <= min < max");
  fails(
      "<scan><horizontal><samples>0</samples></horizontal></scan><range><min>0</min><max>1"
      "</max></range>",
      "<samples> must be at least 1");
}

}  // namespace
}  // namespace kestrel::sensors
