// The lidar system part (src/sensors/lidar/lidar.h) and CpuLidar (gz-sim's
// gz::sim::systems::CpuLidar): lidar, ray and cpu_lidar sensors cast into one scene of the
// world's collisions (src/sensors/lidar/README.md).

#include <spdlog/spdlog.h>

#include "kestrel/components/camera.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"
#include "sensors/lidar/lidar.h"
#include "sensors/rendering/checks.h"

namespace kestrel::sensors {

namespace c = components;
using ignition::math::Pose3d;

void Lidars::configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                       sim::EventBus& events) {
  SensorSystem::configure(entity, config, r, events);
  scene_->configure(r, world());
  if (!scene_->enabled()) return;
  for (const auto& inst : instances()) {
    const auto& s = r.get<c::Sensor>(inst.entity);
    warn_if_blind_lidar(scene_->scene(r), inst.params, inst.rays,
                        compose(r.get<c::WorldPose>(inst.link).value, inst.X_LS),
                        s.element ? s.element->where() : "", s.type,
                        without_world(r.scoped_name(inst.entity)));
  }
}

void Lidars::update(const UpdateInfo& info, ecs::Registry& r) {
  if (scene_->enabled()) SensorSystem::update(info, r);
}

void Lidars::reset(const UpdateInfo& info, ecs::Registry& r) {
  SensorSystem::reset(info, r);
  scene_->reset();
}

bool Lidars::serves(std::string_view t) const {
  return visuals() ? t == "gpu_lidar" || t == "gpu_ray"
                   : t == "lidar" || t == "ray" || t == "cpu_lidar";
}

LidarInstance Lidars::make(const SensorContext& ctx, ecs::Registry& r) {
  LidarInstance inst;
  inst.link = ctx.parent;
  inst.X_LS = ctx.X_PS;
  inst.params = parse_lidar(*ctx.sensor->element);
  inst.rays = lidar_rays(inst.params);
  inst.noise = Noise(inst.params.noise, derive_seed(ctx.world_seed, ctx.scoped_name, "range"));
  const std::string topic = resolve_topic(r, ctx.entity, *ctx.sensor, visuals() ? "scan" : "lidar");
  r.set<c::SensorTopic>(ctx.entity, {topic});
  r.set<c::LidarTopics>(ctx.entity, {topic, topic + "/points"});
  c::LidarReading reading;
  reading.frame_id = without_world(ctx.scoped_name);
  r.set<c::LidarReading>(ctx.entity, reading);
  return inst;
}

void Lidars::sample(LidarInstance& inst, Duration t, NoiseStep step, const ecs::Registry& r,
                    c::LidarReading& out) {
  const render::Scene& scene = scene_->at(r, t);
  scan(scene, inst.params, inst.rays, compose(r.get<c::WorldPose>(inst.link).value, inst.X_LS),
       inst.noise, step, scene_->workers(), scratch_, out);
}

// scan() draws one noise sample per ray, in order, whatever the range.
void Lidars::skip(LidarInstance& inst, Duration, NoiseStep step, const ecs::Registry&) {
  if (!inst.noise.enabled()) return;
  for (std::size_t i = 0, n = inst.rays.size() / 3; i < n; ++i) inst.noise.apply(0.0, step);
}

namespace {

class CpuLidar final : public Lidars {
 public:
  CpuLidar() : Lidars(std::make_shared<RenderedScene>(render::Source::kCollisions)) {}
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    Lidars::configure(entity, config, r, events);
    if (!rendered().enabled() && !instances().empty()) {
      spdlog::info("CpuLidar: --no-render: {} lidar(s) produce no data", instances().size());
    }
  }
};

}  // namespace

std::unique_ptr<System> make_cpu_lidar_system() { return std::make_unique<CpuLidar>(); }

}  // namespace kestrel::sensors
