// The Physics system: owns a PhysicsEngine, rebuilds it on structural change, steps it.

#include <fmt/format.h>

#include <array>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/physics/physics.h"
#include "physics/mujoco/mjcf_builder.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;

class PhysicsSystem final : public System,
                            public ISystemConfigure,
                            public ISystemUpdate,
                            public ISystemReset {
 public:
  int priority() const override { return priority::kPhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& registry,
                 sim::EventBus&) override {
    if (!registry.has<c::World>(entity)) {
      throw Error(config.where(), fmt::format("the Physics system must be attached to a world, "
                                              "found {}",
                                              registry.describe(entity)));
    }
    world_ = entity;
    engine_ = make_mujoco_engine();
    engine_->build(registry, world_);
    counts_ = structure_counts(registry);
    gravity_ = gravity(registry);
  }

  void update(const UpdateInfo& info, ecs::Registry& registry) override {
    if (info.paused || info.dt <= Duration{0}) return;
    // Entities spawned or removed while paused were never listed to Update (the Runner ends a
    // paused step without Update), so changed counts also mean a rebuild.
    // A changed world Gravity (set_physics at run time) is compiled into the model: rebuild too.
    const auto counts = structure_counts(registry);
    const auto g = gravity(registry);
    if (structure_changed(registry) || counts != counts_ || g != gravity_) {
      engine_->build(registry, world_);
    }
    counts_ = counts;
    gravity_ = g;
    engine_->step(info.dt, registry);
  }

  void reset(const UpdateInfo&, ecs::Registry& registry) override {
    engine_->reset(registry);
    counts_ = structure_counts(registry);
    gravity_ = gravity(registry);
  }

 private:
  // Links, joints or collisions created or removed since the last step (lists, not scans).
  static std::array<std::size_t, 3> structure_counts(const ecs::Registry& r) {
    return {r.count<c::Link>(), r.count<c::Joint>(), r.count<c::Collision>()};
  }

  ignition::math::Vector3d gravity(const ecs::Registry& r) const {
    const auto* g = r.try_get<c::Gravity>(world_);
    return g ? g->value : c::Gravity{}.value;
  }

  static bool structure_changed(const ecs::Registry& r) {
    bool changed = false;
    auto hit = [&](ecs::Entity, const auto&) {
      changed = true;
      return false;
    };
    r.each_new<c::Link>(hit);
    if (!changed) r.each_new<c::Joint>(hit);
    if (!changed) r.each_new<c::Collision>(hit);
    if (!changed) r.each_removed<c::Link>(hit);
    if (!changed) r.each_removed<c::Joint>(hit);
    if (!changed) r.each_removed<c::Collision>(hit);
    return changed;
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::array<std::size_t, 3> counts_{};  // links, joints, collisions at the last build
  ignition::math::Vector3d gravity_;     // world gravity at the last build [m/s²]
  std::unique_ptr<PhysicsEngine> engine_;
};

}  // namespace

std::unique_ptr<System> make_physics_system() { return std::make_unique<PhysicsSystem>(); }

std::string export_mjcf(const ecs::Registry& registry, ecs::Entity world) {
  mujoco::BuildOptions opts;
  opts.absolute_mesh_paths = true;
  auto mjcf = mujoco::build_mjcf(registry, world, opts);
  mujoco::throw_on_errors(mjcf.issues);
  return mjcf.xml;
}

std::vector<PhysicsIssue> check_physics(const ecs::Registry& registry, ecs::Entity world) {
  return mujoco::build_mjcf(registry, world).issues;
}

}  // namespace kestrel::physics
