// The Physics system: owns a PhysicsEngine, rebuilds it on structural change, steps it.

#include <fmt/format.h>

#include <array>
#include <vector>

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
                            public ISystemPostUpdate,
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
    structural(registry, seen_);
    if (late_ || !seen_.empty() || counts != counts_ || g != gravity_) {
      engine_->build(registry, world_);
    }
    late_ = false;
    counts_ = counts;
    gravity_ = g;
    engine_->step(info.dt, registry);
  }

  // Links, joints or collisions created or removed after Physics ran (by a later Update system,
  // or while paused) leave the registry's lists at end_step: note them now for the next step.
  void post_update(const UpdateInfo&, const ecs::Registry& registry) override {
    structural(registry, scratch_);
    if (scratch_ != seen_) late_ = true;
    seen_.clear();
  }

  void reset(const UpdateInfo&, ecs::Registry& registry) override {
    engine_->reset(registry);
    counts_ = structure_counts(registry);
    gravity_ = gravity(registry);
    seen_.clear();
    late_ = false;
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

  // The links, joints and collisions created or pending removal this step (usually none).
  static void structural(const ecs::Registry& r, std::vector<ecs::Entity>& out) {
    out.clear();
    auto add = [&](ecs::Entity e, const auto&) { out.push_back(e); };
    r.each_new<c::Link>(add);
    r.each_new<c::Joint>(add);
    r.each_new<c::Collision>(add);
    r.each_removed<c::Link>(add);
    r.each_removed<c::Joint>(add);
    r.each_removed<c::Collision>(add);
  }

  ecs::Entity world_ = ecs::kNullEntity;
  std::array<std::size_t, 3> counts_{};  // links, joints, collisions at the last build
  ignition::math::Vector3d gravity_;     // world gravity at the last build [m/s²]
  std::vector<ecs::Entity> seen_;        // structural changes this step's Update saw
  std::vector<ecs::Entity> scratch_;
  bool late_ = false;                    // structural changes after Update: rebuild next step
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
