// The Physics system: owns a PhysicsEngine, rebuilds it on structural change, steps it.

#include <fmt/format.h>

#include <array>
#include <map>
#include <set>
#include <unordered_set>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/physics_islands.h"
#include "kestrel/components/world.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sim/events.h"
#include "physics/mujoco/island.h"
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
                 sim::EventBus& events) override {
    if (!registry.has<c::World>(entity)) {
      throw Error(config.where(), fmt::format("the Physics system must be attached to a world, "
                                              "found {}",
                                              registry.describe(entity)));
    }
    world_ = entity;
    build(registry);
    for (const auto& [model, island] : islands_) initial_.insert(model);
    counts_ = structure_counts(registry);
    gravity_ = gravity(registry);
    check_sub_ = events.subscribe<sim::CheckPhysics>(
        [this](const sim::CheckPhysics& c) { check_now(*c.registry, *c.result); });
  }

  void update(const UpdateInfo& info, ecs::Registry& registry) override {
    if (info.paused || info.dt <= Duration{0}) return;
    // Entities spawned or removed while paused were never listed to Update (the Runner ends a
    // paused step without Update), so changed counts also mean a rebuild.
    // A changed world Gravity (set_physics at run time) is compiled into the model: rebuild too.
    const auto counts = structure_counts(registry);
    const auto g = gravity(registry);
    structural(registry, seen_);
    const bool changed = late_ || !seen_.empty() || counts != counts_ || g != gravity_;
    // Built at this step's boundary for a CheckPhysics, and nothing changed since: not again.
    const bool built = checked_ && seen_ == checked_seen_ && counts == counts_ && g == gravity_;
    if (changed && !built) build(registry);
    late_ = false;
    checked_ = false;
    counts_ = counts;
    gravity_ = g;
    // An engine reports what failed; the time is the Runner's (an engine rebuilt after a spawn
    // restarts its own clock at 0).
    try {
      if (islands_.empty()) {
        engine_->step(info.dt, registry);
      } else {
        step_islands(info.dt, registry);
      }
    } catch (const Error& e) {
      std::string what = e.what();
      if (!e.where().empty() && what.starts_with(e.where() + ": ")) {
        what.erase(0, e.where().size() + 2);
      }
      throw Error(e.where(), fmt::format("physics stopped at t = {} s: {}",
                                         exact_seconds(info.sim_time), what));
    }
  }

  // Links, joints or collisions created or removed after Physics ran (by a later Update system,
  // or while paused) leave the registry's lists at end_step: note them now for the next step.
  void post_update(const UpdateInfo&, const ecs::Registry& registry) override {
    structural(registry, scratch_);
    if (scratch_ != seen_) late_ = true;
    seen_.clear();
  }

  void reset(const UpdateInfo&, ecs::Registry& registry) override {
    if (engine_) engine_->reset(registry);
    // The islands of the first build return to it exactly; later ones go (their models are
    // gone from the restored registry, or come back at the next step's rebuild).
    std::erase_if(islands_, [&](const auto& i) { return !initial_.count(i.first); });
    for (auto& [model, island] : islands_) island->reset(registry);
    counts_ = structure_counts(registry);
    gravity_ = gravity(registry);
    seen_.clear();
    late_ = false;
    checked_ = false;
  }

 private:
  // CheckPhysics at a step boundary: build now. A failed build leaves a single engine as it was
  // (MujocoEngine::build takes a new model over only when it steps); islands may have been
  // rebuilt with what the publisher now removes, so they are rebuilt at the next step.
  void check_now(ecs::Registry& r, sim::CheckPhysics::Result& result) {
    result.handled = true;
    try {
      build(r);
    } catch (const Error& e) {
      result.error = e.what();
      late_ = late_ || !islands_.empty() || r.has<c::PhysicsIslands>(world_);
      checked_ = false;
      return;
    }
    checked_ = true;
    structural(r, checked_seen_);
    counts_ = structure_counts(r);
    gravity_ = gravity(r);
  }

  // One engine for the world, or with <kestrel:physics_islands/> one per top-level moving model
  // (islands of models that persist are rebuilt with their state; others come and go).
  void build(ecs::Registry& r) {
    if (!r.has<c::PhysicsIslands>(world_)) {
      islands_.clear();
      if (!engine_) engine_ = make_mujoco_engine();
      engine_->build(r, world_);
      return;
    }
    std::vector<ecs::Entity> moving;
    static_geoms_.clear();
    owned_links_.clear();
    owned_joints_.clear();
    owned_.clear();
    for (ecs::Entity m : r.children(world_)) {
      if (!r.has<c::Model>(m) || r.removal_pending(m)) continue;
      const auto* st = r.try_get<c::Static>(m);
      const bool is_static = st && st->value;
      if (!is_static) moving.push_back(m);
      owned_.insert(m);
      for (ecs::Entity e : r.descendants(m)) {
        if (r.has<c::Model>(e) || r.has<c::Link>(e)) owned_.insert(e);
        if (is_static && r.has<c::Collision>(e)) static_geoms_.push_back(e);
        if (!is_static && r.has<c::Link>(e)) owned_links_.insert(e);
        if (!is_static && r.has<c::Joint>(e)) owned_joints_.insert(e);
      }
    }
    if (moving.empty()) {  // nothing moves: one engine holds the static world
      islands_.clear();
      if (!engine_) engine_ = make_mujoco_engine();
      engine_->build(r, world_);
      return;
    }
    engine_.reset();
    // Islands are built in place (existing ones) or aside (new ones) and exchanged only when
    // every one was built: a failure leaves the map whole (check_now rebuilds at the next step).
    std::map<ecs::Entity, std::unique_ptr<PhysicsEngine>> fresh;
    for (ecs::Entity m : moving) {
      if (auto it = islands_.find(m); it != islands_.end()) {
        it->second->build(r, world_);
      } else {
        auto island = make_mujoco_island(m);
        island->build(r, world_);
        fresh.emplace(m, std::move(island));
      }
    }
    std::map<ecs::Entity, std::unique_ptr<PhysicsEngine>> next = std::move(fresh);
    for (ecs::Entity m : moving) {
      if (auto it = islands_.find(m); it != islands_.end()) next.emplace(m, std::move(it->second));
    }
    // Islands of the first build whose model went stay (idle) so that reset can restore them.
    for (auto& [m, island] : islands_) {
      if (island && initial_.count(m)) next.emplace(m, std::move(island));
    }
    islands_ = std::move(next);
  }

  // Every island steps with the static world; what only the system as a whole can do is done
  // here: commands for no island are errors, contacts on static geoms are cleared once, and
  // one-shot commands are removed once every island has applied them.
  static void require(const ecs::Registry& r, ecs::Entity e,
                      const std::unordered_set<ecs::Entity>& owners, const char* what,
                      const char* expected) {
    if (!owners.count(e)) {
      throw Error(r.describe(e), fmt::format("{} needs {} simulated by Physics", what, expected));
    }
  }

  void step_islands(Duration dt, ecs::Registry& r) {
    r.each<c::ExternalWorldWrenchCmd>([&](ecs::Entity e, const c::ExternalWorldWrenchCmd&) {
      require(r, e, owned_links_, "ExternalWorldWrenchCmd", "a moving link");
    });
    r.each<c::JointForceCmd>([&](ecs::Entity e, const c::JointForceCmd&) {
      require(r, e, owned_joints_, "JointForceCmd", "a joint");
    });
    r.each<c::JointVelocityCmd>([&](ecs::Entity e, const c::JointVelocityCmd&) {
      require(r, e, owned_joints_, "JointVelocityCmd", "a joint");
    });
    for (ecs::Entity g : static_geoms_) {
      if (auto* cs = r.try_get<c::Contacts>(g)) cs->points.clear();
    }
    for (ecs::Entity m : r.children(world_)) {
      if (auto it = islands_.find(m); it != islands_.end()) it->second->step(dt, r);
    }
    remove_one_shot<c::JointPositionReset>(r, owned_joints_, "JointPositionReset", "a joint");
    remove_one_shot<c::JointVelocityReset>(r, owned_joints_, "JointVelocityReset", "a joint");
    remove_one_shot<c::WorldPoseCmd>(r, owned_, "WorldPoseCmd", "a model or link");
  }

  template <class C>
  void remove_one_shot(ecs::Registry& r, const std::unordered_set<ecs::Entity>& owners,
                       const char* what, const char* expected) {
    if (r.count<C>() == 0) return;
    std::vector<ecs::Entity> done;
    r.each<C>([&](ecs::Entity e, const C&) {
      require(r, e, owners, what, expected);
      done.push_back(e);
    });
    for (ecs::Entity e : done) r.remove<C>(e);
  }

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
  bool late_ = false;  // structural changes after Update: rebuild next step
  // Built for a CheckPhysics at this step's boundary, with these structural changes listed.
  bool checked_ = false;
  std::vector<ecs::Entity> checked_seen_;
  sim::EventBus::Subscription check_sub_;
  std::unique_ptr<PhysicsEngine> engine_;  // the whole world (no islands)
  // Islands (components::PhysicsIslands): by top-level moving model.
  std::map<ecs::Entity, std::unique_ptr<PhysicsEngine>> islands_;
  std::set<ecs::Entity> initial_;  // models with an island at the first build
  std::vector<ecs::Entity> static_geoms_;
  std::unordered_set<ecs::Entity> owned_links_, owned_joints_;  // moving, in some island
  std::unordered_set<ecs::Entity> owned_;  // models and links some island holds (WorldPoseCmd)
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
