#pragma once
// Lidars (gpu_lidar / gpu_ray on visuals in the Sensors system; lidar / ray / cpu_lidar on
// collisions in the CpuLidar system): SDF <lidar>/<ray> parameters, ray directions, the scan as
// gz-sensors computes it (inclusive angles, +inf misses, noise then clamp) and the system part
// both use.

#include <memory>
#include <string>
#include <vector>

#include "kestrel/components/camera.h"
#include "kestrel/core/element.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"
#include "sensors/common/sensor_system.h"
#include "sensors/noise/noise.h"
#include "sensors/rendering/rendered_scene.h"

namespace kestrel::sensors {

struct LidarParams {
  std::uint32_t samples = 640, vertical_samples = 1;  ///< rays per ring, rings
  double min_angle = 0, max_angle = 0;                ///< horizontal [rad]
  double vertical_min_angle = 0, vertical_max_angle = 0;
  double range_min = 0, range_max = 0;  ///< [m]
  NoiseParams noise;                    ///< gaussian on the range [m]
};

/// Reads the sensor's <lidar> or <ray> element. @throws Error (file:line) on bad values.
LidarParams parse_lidar(const Element& sensor);

/// Unit directions in the sensor frame, ring by ring from the lowest, each ring from min_angle:
/// azimuth min + i·(max − min)/(n − 1), elevation likewise (one ray or ring: the min angle).
std::vector<float> lidar_rays(const LidarParams& p);

/// One scan from X_WS into `out` (ranges, intensities, angles, pose); `noise` is applied to
/// every range in order, then each is clamped to [range_min, range_max] (infinities kept).
/// Surfaces nearer than range_min are not seen (the rasteriser's near plane).
void scan(const render::Scene& scene, const LidarParams& p, const std::vector<float>& rays,
          const ignition::math::Pose3d& X_WS, Noise& noise, NoiseStep step,
          render::Workers& workers, std::vector<float>& scratch, components::LidarReading& out);

/// One lidar.
struct LidarInstance {
  ecs::Entity entity = ecs::kNullEntity;
  Schedule schedule;
  ecs::Entity link = ecs::kNullEntity;
  ignition::math::Pose3d X_LS;
  LidarParams params;
  std::vector<float> rays;
  Noise noise;
};

/// The lidars of a scene: of the visuals, gpu_lidar and gpu_ray (part of the Sensors system,
/// sharing its scene with the cameras), or of the collisions, lidar, ray and cpu_lidar (the
/// CpuLidar system). Nothing is scanned under --no-render. A stopped lidar (SensorFault) casts
/// no ray; its noise stream advances as a scan's would.
class Lidars : public SensorSystem<LidarInstance, components::LidarReading> {
 public:
  explicit Lidars(std::shared_ptr<RenderedScene> scene) : scene_(std::move(scene)) {}
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override;
  void update(const UpdateInfo& info, ecs::Registry& r) override;
  void reset(const UpdateInfo& info, ecs::Registry& r) override;

 protected:
  bool serves(std::string_view type) const override;
  LidarInstance make(const SensorContext& ctx, ecs::Registry& r) override;
  void sample(LidarInstance& inst, Duration t, NoiseStep step, const ecs::Registry& r,
              components::LidarReading& out) override;
  void skip(LidarInstance& inst, Duration t, NoiseStep step, const ecs::Registry& r) override;
  RenderedScene& rendered() { return *scene_; }

 private:
  bool visuals() const { return scene_->source() == render::Source::kVisuals; }
  std::shared_ptr<RenderedScene> scene_;
  std::vector<float> scratch_;
};

}  // namespace kestrel::sensors
