#pragma once
// What the sensor systems that ray cast share (the Sensors system's cameras and gpu_lidars, the
// CpuLidar system): one render::Scene of the world, built on first use and moved to the links'
// poses once per step in which a frame is due; the worker pool; `kestrel run --no-render`.

#include <ignition/math/Vector3.hh>
#include <memory>
#include <optional>

#include "kestrel/components/camera.h"
#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"

namespace kestrel::sensors {

class RenderedScene {
 public:
  explicit RenderedScene(render::Source source) : source_(source) {}

  /// Reads the world's components::RenderSettings (absent: enabled, one thread per core). Only
  /// the first call acts (every system part sharing the scene calls it).
  void configure(const ecs::Registry& r, ecs::Entity world) {
    if (workers_) return;
    world_ = world;
    const auto* settings = r.try_get<components::RenderSettings>(world);
    enabled_ = !settings || settings->enabled;
    workers_ = std::make_unique<render::Workers>(settings ? settings->threads : 0);
  }
  /// Overrides the world's <scene> ambient light and background once the scene is built.
  void set_lighting(std::optional<ignition::math::Vector3d> ambient,
                    std::optional<ignition::math::Vector3d> background) {
    ambient_ = ambient;
    background_ = background;
  }
  /// False under `kestrel run --no-render`: no scene, no frames.
  bool enabled() const { return enabled_; }
  render::Source source() const { return source_; }

  /// The scene as built (at the first call) from the registry's state.
  render::Scene& scene(const ecs::Registry& r) {
    if (!scene_) {
      scene_ = std::make_unique<render::Scene>(r, world_, source_);
      if (ambient_ || background_) {
        scene_->set_lighting(ambient_.value_or(scene_->ambient()),
                             background_.value_or(scene_->background()));
      }
    }
    return *scene_;
  }
  /// The scene at state time t: moved to the links' poses at the first call for each t.
  render::Scene& at(const ecs::Registry& r, Duration t) {
    render::Scene& s = scene(r);
    if (time_ != t) {
      s.update(r);
      time_ = t;
    }
    return s;
  }
  render::Workers& workers() { return *workers_; }
  /// After a world reset: the restored poses are taken at the next frame.
  void reset() { time_ = Duration{-1}; }

 private:
  render::Source source_;
  ecs::Entity world_ = ecs::kNullEntity;
  bool enabled_ = true;
  std::optional<ignition::math::Vector3d> ambient_, background_;
  std::unique_ptr<render::Scene> scene_;
  std::unique_ptr<render::Workers> workers_;
  Duration time_{-1};
};

}  // namespace kestrel::sensors
