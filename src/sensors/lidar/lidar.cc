#include "sensors/lidar/lidar.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kestrel/core/error.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {

namespace {

std::uint32_t samples(const Element& dir, std::uint32_t fallback) {
  const int n = dir.get_or<int>("samples", static_cast<int>(fallback));
  if (n < 1) throw Error(dir.where(), "<samples> must be at least 1, found " + std::to_string(n));
  return static_cast<std::uint32_t>(n);
}

void angles(const Element& dir, double& lo, double& hi) {
  lo = dir.get_or<double>("min_angle", 0);
  hi = dir.get_or<double>("max_angle", 0);
  if (hi < lo) {
    throw Error(dir.where(), "<max_angle> (" + std::to_string(hi) + ") is less than <min_angle> (" +
                                 std::to_string(lo) + ")");
  }
  if (const Element* res = dir.child("resolution"); res && res->value<double>() != 1) {
    throw Error(res->where(),
                "<resolution> other than 1 is not supported (Gazebo does not "
                "interpolate either): set <samples> to the rays wanted");
  }
  reject_unread(dir, "expected <samples>, <resolution>, <min_angle>, <max_angle>");
}

}  // namespace

LidarParams parse_lidar(const Element& sensor) {
  const std::string type = sensor.attribute("type").value_or("");
  const Element* el = sensor.child("lidar");
  const char* name = "lidar";
  if (!el) {
    el = sensor.child("ray");
    name = "ray";
  }
  sensor_type_element(sensor, name);
  if (!el) throw Error(sensor.where(), "sensor type '" + type + "' needs a <lidar> (or <ray>)");
  LidarParams p;
  const Element* sc = el->child("scan");
  if (!sc) throw Error(el->where(), "<" + std::string(name) + "> needs <scan><horizontal>");
  if (const Element* h = sc->child("horizontal")) {
    p.samples = samples(*h, 640);
    angles(*h, p.min_angle, p.max_angle);
  } else {
    throw Error(sc->where(), "<scan> needs <horizontal>");
  }
  if (const Element* v = sc->child("vertical")) {
    p.vertical_samples = samples(*v, 1);
    angles(*v, p.vertical_min_angle, p.vertical_max_angle);
  }
  reject_unread(*sc, "expected <horizontal>, <vertical>");
  const Element* range = el->child("range");
  if (!range) throw Error(el->where(), "<" + std::string(name) + "> needs <range><min>/<max>");
  p.range_min = range->get<double>("min");
  p.range_max = range->get<double>("max");
  range->child("resolution");  // ranges are not quantized (Gazebo does not either)
  reject_unread(*range, "expected <min>, <max>, <resolution>");
  if (!(p.range_min >= 0) || !(p.range_max > p.range_min) || !std::isfinite(p.range_max)) {
    throw Error(range->where(), "<range> needs 0 <= min < max (finite), found min " +
                                    std::to_string(p.range_min) + ", max " +
                                    std::to_string(p.range_max));
  }
  if (const Element* n = el->child("noise")) {
    p.noise = parse_noise(n);
    if (p.noise.type == NoiseParams::Type::kGaussianQuantized) {
      throw Error(n->where(), "lidar <noise> supports type gaussian only (as Gazebo)");
    }
  }
  el->child("visibility_mask");
  reject_unread(*el, "expected <scan>, <range>, <noise>, <visibility_mask>");
  return p;
}

std::vector<float> lidar_rays(const LidarParams& p) {
  std::vector<float> d;
  d.reserve(3ull * p.samples * p.vertical_samples);
  const double hs = p.samples > 1 ? (p.max_angle - p.min_angle) / (p.samples - 1) : 0;
  const double vs = p.vertical_samples > 1
                        ? (p.vertical_max_angle - p.vertical_min_angle) / (p.vertical_samples - 1)
                        : 0;
  for (std::uint32_t j = 0; j < p.vertical_samples; ++j) {
    const double el = p.vertical_min_angle + j * vs;
    for (std::uint32_t i = 0; i < p.samples; ++i) {
      const double az = p.min_angle + i * hs;
      d.push_back(static_cast<float>(std::cos(el) * std::cos(az)));
      d.push_back(static_cast<float>(std::cos(el) * std::sin(az)));
      d.push_back(static_cast<float>(std::sin(el)));
    }
  }
  return d;
}

void scan(const render::Scene& scene, const LidarParams& p, const std::vector<float>& rays,
          const ignition::math::Pose3d& X_WS, Noise& noise, NoiseStep step,
          render::Workers& workers, std::vector<float>& scratch, components::LidarReading& out) {
  const std::size_t n = rays.size() / 3;
  scratch.resize(n);
  render::cast_rays(scene, rays, X_WS, static_cast<float>(p.range_min),
                    static_cast<float>(p.range_max), scratch.data(), nullptr, workers);
  out.ranges.resize(n);
  out.intensities.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double r = scratch[i];  // +inf: nothing within range_max
    if (noise.enabled()) r = noise.apply(r, step);
    if (std::isnan(r)) r = p.range_max;
    if (std::isfinite(r)) r = std::clamp(r, p.range_min, p.range_max);
    out.ranges[i] = r;
  }
  out.world_pose = X_WS;
  out.count = p.samples;
  out.vertical_count = p.vertical_samples;
  out.angle_min = p.min_angle, out.angle_max = p.max_angle;
  out.angle_step = p.samples > 1 ? (p.max_angle - p.min_angle) / (p.samples - 1) : 0;
  out.vertical_angle_min = p.vertical_min_angle, out.vertical_angle_max = p.vertical_max_angle;
  out.vertical_angle_step = p.vertical_samples > 1 ? (p.vertical_max_angle - p.vertical_min_angle) /
                                                         (p.vertical_samples - 1)
                                                   : 0;
  out.range_min = p.range_min, out.range_max = p.range_max;
}

}  // namespace kestrel::sensors
