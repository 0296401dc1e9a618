// The Physics system: owns a PhysicsEngine, rebuilds it on structural change, steps it.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <numeric>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kestrel/components/detachable_joint.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/physics_islands.h"
#include "kestrel/components/world.h"
#include "kestrel/core/task_pool.h"
#include "kestrel/physics/physics.h"
#include "kestrel/sim/events.h"
#include "physics/mujoco/island.h"
#include "physics/mujoco/mjcf_builder.h"

namespace kestrel::physics {
namespace {

namespace c = kestrel::components;

// [m] islands merge below a gap of twice this between their boxes and split above twice
// kSplitMargin.
constexpr double kMergeMargin = 0.05, kSplitMargin = 0.1;

struct Island {
  std::vector<ecs::Entity> models;  // top-level moving models, sorted
  std::unique_ptr<IslandEngine> engine;
  bool initial = false;  // built by configure: reset returns to it
};

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
    threads_ = threads_parameter(config);
    build(registry);
    if (!islands_.empty()) partition(registry, to_seconds(step_size(registry)));
    for (Island& i : islands_) i.initial = true;
    parked_.clear();
    label(registry);
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
    if (!islands_.empty()) partition(registry, to_seconds(info.dt));
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
    // The islands of the first build (after configure's partition) return to it exactly, also
    // those merged or split since (parked); later ones go (their models are gone from the
    // restored registry, or come back at the next step's rebuild).
    std::vector<Island> first;
    for (Island& i : islands_) {
      if (i.initial) first.push_back(std::move(i));
    }
    for (Island& i : parked_) first.push_back(std::move(i));
    parked_.clear();
    std::sort(first.begin(), first.end(), by_first);
    islands_ = std::move(first);
    for (Island& i : islands_) i.engine->reset(registry);
    label(registry);
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
      late_ = late_ || !islands_.empty() || islands_wanted_;
      checked_ = false;
      return;
    }
    checked_ = true;
    structural(r, checked_seen_);
    counts_ = structure_counts(r);
    gravity_ = gravity(r);
  }

  static bool by_first(const Island& a, const Island& b) { return a.models < b.models; }

  Duration step_size(const ecs::Registry& r) const {
    const auto* p = r.try_get<c::PhysicsParams>(world_);
    return p ? p->max_step_size : c::PhysicsParams{}.max_step_size;
  }

  // One engine for the world, or islands (components::PhysicsIslands, or automatically for a
  // world of more than kAutoIslandModels moving models, decided at the first build): the
  // islands of models that persist are rebuilt with their state (or rebuilt without the models
  // that went), new models start in islands of their own; partition() then merges and splits.
  void build(ecs::Registry& r) {
    std::vector<ecs::Entity> moving;
    static_geoms_.clear();
    owned_links_.clear();
    owned_joints_.clear();
    owned_.clear();
    commands_checked_ = false;
    bonds_.clear();
    for (ecs::Entity m : r.children(world_)) {
      if (r.has<c::Joint>(m)) {  // a joint of the world binds the models of its links
        if (const auto* jd = r.try_get<c::JointData>(m)) {
          const ecs::Entity a = top_model(r, jd->parent), b = top_model(r, jd->child);
          if (a != ecs::kNullEntity && b != ecs::kNullEntity && a != b) bonds_.emplace_back(a, b);
        }
        continue;
      }
      if (!r.has<c::Model>(m) || r.removal_pending(m)) continue;
      // A detachable joint binds the models of its links (while detached too: one island).
      for (ecs::Entity e : r.children(m)) {
        if (const auto* dj = r.try_get<c::DetachableJoint>(e)) {
          const ecs::Entity a = top_model(r, dj->parent_link), b = top_model(r, dj->child_link);
          if (a != ecs::kNullEntity && b != ecs::kNullEntity && a != b) bonds_.emplace_back(a, b);
        }
      }
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
    if (const auto* pi = r.try_get<c::PhysicsIslands>(world_)) {
      islands_wanted_ = pi->enabled;
    } else if (!decided_) {
      islands_wanted_ = moving.size() > static_cast<std::size_t>(c::kAutoIslandModels);
    }
    decided_ = true;
    if (!islands_wanted_ || moving.empty()) {  // one engine (also for a world where nothing moves)
      islands_.clear();
      parked_.clear();
      if (!engine_) engine_ = make_mujoco_engine();
      engine_->build(r, world_);
      return;
    }
    engine_.reset();
    std::sort(moving.begin(), moving.end());
    // Islands are built in place (same models) or aside (new ones) and exchanged only when
    // every one was built: a failure leaves the list whole (check_now rebuilds at the next step).
    std::vector<Island> next;
    std::vector<char> placed(moving.size(), 0);
    std::vector<std::size_t> kept;  // indices into islands_ rebuilt in place
    CarriedState carried;
    for (std::size_t i = 0; i < islands_.size(); ++i) {
      Island& is = islands_[i];
      std::vector<ecs::Entity> stay;
      for (ecs::Entity m : is.models) {
        const auto it = std::lower_bound(moving.begin(), moving.end(), m);
        if (it != moving.end() && *it == m) {
          stay.push_back(m);
          placed[it - moving.begin()] = 1;
        }
      }
      if (stay == is.models) {
        is.engine->build(r, world_);
        kept.push_back(i);
      } else if (!stay.empty()) {
        is.engine->save_state(carried);
        Island fresh{stay, make_mujoco_island(stay), false};
        next.push_back(std::move(fresh));
      }
    }
    for (std::size_t k = 0; k < moving.size(); ++k) {
      if (!placed[k]) next.push_back(Island{{moving[k]}, make_mujoco_island({moving[k]}), false});
    }
    for (Island& is : next) is.engine->build_from(r, world_, carried);
    for (std::size_t i : kept) next.push_back(std::move(islands_[i]));
    // Initial islands that changed or whose models went stay (idle) so that reset can restore
    // them.
    for (Island& is : islands_) {
      if (is.engine && is.initial) parked_.push_back(std::move(is));
    }
    std::sort(next.begin(), next.end(), by_first);
    islands_ = std::move(next);
    label(r);
  }

  ecs::Entity top_model(const ecs::Registry& r, ecs::Entity e) const {
    if (e == ecs::kNullEntity || !r.alive(e)) return ecs::kNullEntity;
    while (r.parent(e) != world_ && r.parent(e) != ecs::kNullEntity) e = r.parent(e);
    return r.parent(e) == world_ && r.has<c::Model>(e) ? e : ecs::kNullEntity;
  }

  // Proximity islands. Every moving model's box (its collision geoms at the current state,
  // grown by their motion over the step) is inflated by kMergeMargin: models whose inflated
  // boxes overlap (gap below 2 kMergeMargin) are in one island; models already in one island
  // stay together until the gap reaches 2 kSplitMargin (hysteresis: no rebuild at every step
  // of two models at the edge). Islands are the connected components, each listed by its
  // sorted models and stepped in that order: the partition is a function of the state and the
  // previous partition only. Contacts act between geoms that overlap at the state a step
  // starts from, which is where this runs: models in different islands cannot touch. A model's
  // WorldPoseCmd waiting for this step counts with its target too (the teleport happens in the
  // step, after this).
  void partition(ecs::Registry& r, double dt) {
    boxes_.clear();
    entry_island_.clear();
    for (std::size_t i = 0; i < islands_.size(); ++i) {
      islands_[i].engine->bounds(dt, boxes_);
      entry_island_.resize(boxes_.size(), static_cast<int>(i));
    }
    const std::size_t n = boxes_.size();
    entry_model_.clear();
    for (const Island& is : islands_) {
      entry_model_.insert(entry_model_.end(), is.models.begin(), is.models.end());
    }
    if (r.count<c::WorldPoseCmd>() != 0) teleport_targets(r);
    uf_.resize(n);
    std::iota(uf_.begin(), uf_.end(), 0);
    order_.clear();
    for (std::size_t k = 0; k < n; ++k) {
      if (!boxes_[k].empty()) order_.push_back(static_cast<int>(k));
    }
    std::sort(order_.begin(), order_.end(), [&](int a, int b) {
      return boxes_[a].lo.X() < boxes_[b].lo.X() || (boxes_[a].lo.X() == boxes_[b].lo.X() && a < b);
    });
    // Sweep and prune along x.
    for (std::size_t a = 0; a < order_.size(); ++a) {
      const Aabb& A = boxes_[order_[a]];
      for (std::size_t b = a + 1; b < order_.size(); ++b) {
        const Aabb& B = boxes_[order_[b]];
        if (B.lo.X() - A.hi.X() >= 2 * kSplitMargin) break;
        const double gap =
            std::max({B.lo.X() - A.hi.X(), A.lo.X() - B.hi.X(), B.lo.Y() - A.hi.Y(),
                      A.lo.Y() - B.hi.Y(), B.lo.Z() - A.hi.Z(), A.lo.Z() - B.hi.Z()});
        const bool together = entry_island_[order_[a]] == entry_island_[order_[b]];
        if (gap < 2 * kMergeMargin || (together && gap < 2 * kSplitMargin)) {
          unite(order_[a], order_[b]);
        }
      }
    }
    if (!bonds_.empty()) {
      std::unordered_map<ecs::Entity, int> at;
      for (std::size_t k = 0; k < n; ++k) at[entry_model_[k]] = static_cast<int>(k);
      for (const auto& [a, b] : bonds_) {
        if (at.count(a) && at.count(b)) unite(at[a], at[b]);
      }
    }
    // Unchanged (the common case): every island is one component of its own.
    bool same = true;
    root_island_.assign(n, -1);
    for (std::size_t k = 0; k < n && same; ++k) {
      const int root = find(static_cast<int>(k));
      if (root_island_[root] < 0) root_island_[root] = entry_island_[k];
      same = root_island_[root] == entry_island_[k] &&
             find(static_cast<int>(k)) == find(first_entry(entry_island_[k]));
    }
    if (same) return;
    regroup(r, n);
  }

  int first_entry(int island) const {
    return static_cast<int>(std::lower_bound(entry_island_.begin(), entry_island_.end(), island) -
                            entry_island_.begin());
  }

  // The target of a WorldPoseCmd on a moving model or one of its links widens the model's box
  // by a cube around it as large as the box seen from the entity's current origin.
  void teleport_targets(const ecs::Registry& r) {
    r.each<c::WorldPoseCmd>([&](ecs::Entity e, const c::WorldPoseCmd& cmd) {
      const ecs::Entity top = top_model(r, e);
      const auto* now = r.try_get<c::WorldPose>(e);
      if (top == ecs::kNullEntity || !now) return;
      for (std::size_t k = 0; k < entry_model_.size(); ++k) {
        if (entry_model_[k] != top || boxes_[k].empty()) continue;
        Aabb& box = boxes_[k];
        const auto& o = now->value.Pos();
        double reach = 0;
        for (const auto& c : {box.lo, box.hi}) {
          reach = std::max(
              {reach, std::abs(c.X() - o.X()), std::abs(c.Y() - o.Y()), std::abs(c.Z() - o.Z())});
        }
        reach *= std::sqrt(3.0);
        const auto& p = cmd.value.Pos();
        box.lo.Min(p - ignition::math::Vector3d(reach, reach, reach));
        box.hi.Max(p + ignition::math::Vector3d(reach, reach, reach));
      }
    });
  }

  int find(int k) {
    while (uf_[k] != k) k = uf_[k] = uf_[uf_[k]];
    return k;
  }
  void unite(int a, int b) {
    a = find(a), b = find(b);
    if (a != b) uf_[std::max(a, b)] = std::min(a, b);
  }

  // The components become islands: one whose models are exactly an island's keeps it; the
  // others are built from the state of the islands they come from, which dissolve.
  void regroup(ecs::Registry& r, std::size_t n) {
    std::unordered_map<int, std::vector<ecs::Entity>> comp;
    for (std::size_t k = 0; k < n; ++k) comp[find(static_cast<int>(k))].push_back(entry_model_[k]);
    std::vector<std::vector<ecs::Entity>> groups;
    for (auto& [root, models] : comp) {
      std::sort(models.begin(), models.end());
      groups.push_back(std::move(models));
    }
    std::sort(groups.begin(), groups.end());
    std::vector<char> reused(islands_.size(), 0);
    std::vector<Island> next;
    std::vector<std::vector<ecs::Entity>> fresh;
    for (auto& g : groups) {
      const auto it = std::lower_bound(
          islands_.begin(), islands_.end(), g,
          [](const Island& i, const std::vector<ecs::Entity>& m) { return i.models < m; });
      if (it != islands_.end() && it->models == g) {
        reused[it - islands_.begin()] = 1;
      } else {
        fresh.push_back(std::move(g));
      }
    }
    CarriedState carried;
    for (std::size_t i = 0; i < islands_.size(); ++i) {
      if (!reused[i]) islands_[i].engine->save_state(carried);
    }
    for (auto& g : fresh) {
      Island is{g, make_mujoco_island(g), false};
      is.engine->build_from(r, world_, carried);
      next.push_back(std::move(is));
    }
    for (std::size_t i = 0; i < islands_.size(); ++i) {
      if (reused[i]) {
        next.push_back(std::move(islands_[i]));
      } else if (islands_[i].initial) {
        parked_.push_back(std::move(islands_[i]));
      }
    }
    std::sort(next.begin(), next.end(), by_first);
    islands_ = std::move(next);
    label(r);
  }

  // components::PhysicsIsland on every island's models.
  void label(ecs::Registry& r) const {
    for (const Island& is : islands_) {
      for (ecs::Entity m : is.models) {
        if (auto* pi = r.try_get<c::PhysicsIsland>(m)) {
          pi->first = is.models.front();
        } else {
          r.add<c::PhysicsIsland>(m, c::PhysicsIsland{is.models.front()});
        }
      }
    }
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
    // Which entities hold these commands changes only with the registry's layout, and what the
    // islands own only with a build: checked again only then (a swarm's thousands of rotors).
    if (!commands_checked_ || commands_epoch_ != r.layout_epoch()) {
      r.each<c::ExternalWorldWrenchCmd>([&](ecs::Entity e, const c::ExternalWorldWrenchCmd&) {
        require(r, e, owned_links_, "ExternalWorldWrenchCmd", "a moving link");
      });
      r.each<c::JointForceCmd>([&](ecs::Entity e, const c::JointForceCmd&) {
        require(r, e, owned_joints_, "JointForceCmd", "a joint");
      });
      r.each<c::JointVelocityCmd>([&](ecs::Entity e, const c::JointVelocityCmd&) {
        require(r, e, owned_joints_, "JointVelocityCmd", "a joint");
      });
      commands_checked_ = true;
      commands_epoch_ = r.layout_epoch();
    }
    // Surface commands act on the contacts of a moving link's collision (its island's).
    auto on_moving_collision = [&](ecs::Entity e, const char* what) {
      const ecs::Entity link = r.parent(e);
      if (!r.has<c::Collision>(e) || !owned_links_.count(link)) {
        throw Error(r.describe(e),
                    fmt::format("{} needs a collision of a moving link simulated by Physics", what));
      }
    };
    r.each<c::SlipComplianceCmd>(
        [&](ecs::Entity e, const c::SlipComplianceCmd&) { on_moving_collision(e, "SlipComplianceCmd"); });
    r.each<c::ContactFrictionCmd>([&](ecs::Entity e, const c::ContactFrictionCmd&) {
      on_moving_collision(e, "ContactFrictionCmd");
    });
    for (ecs::Entity g : static_geoms_) {
      if (auto* cs = r.try_get<c::Contacts>(g)) cs->points.clear();
    }
    step_each(dt, r);
    for (const Island& is : islands_) {
      for (const auto& [g, point] : is.engine->static_contacts()) {
        if (auto* cs = r.try_get<c::Contacts>(g)) cs->points.push_back(point);
      }
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

  // The islands step on `threads_` threads (the stepping thread and workers), in contiguous
  // runs of islands taken in turn; each island's result depends on its own state only, and
  // what islands share (static geoms' contacts, errors) is gathered in island order afterwards:
  // the results are those of one thread, bit for bit. One-shot commands (teleports, resets) may
  // write shared entities (a static model's poses, in every island): such steps run on one
  // thread.
  void step_each(Duration dt, ecs::Registry& r) {
    const bool one_shot = r.count<c::WorldPoseCmd>() != 0 ||
                          r.count<c::JointPositionReset>() != 0 ||
                          r.count<c::JointVelocityReset>() != 0;
    const std::size_t n = islands_.size();
    if (threads_ < 2 || n < 2 || one_shot) {
      for (Island& is : islands_) is.engine->step(dt, r);
      return;
    }
    if (!pool_) pool_ = std::make_unique<TaskPool>(threads_ - 1);
    errors_.assign(n, nullptr);
    const std::size_t runs = std::min<std::size_t>(n, 8 * threads_);
    pool_->run(runs, [&](std::size_t k) {
      for (std::size_t i = k * n / runs; i < (k + 1) * n / runs; ++i) {
        try {
          islands_[i].engine->step(dt, r);
        } catch (...) {
          errors_[i] = std::current_exception();
        }
      }
    });
    for (const auto& e : errors_) {
      if (e) std::rethrow_exception(e);
    }
  }

  // <threads> of the Physics <plugin>: how many threads step islands (1 to 256); absent: the
  // CPUs the process may run on.
  static unsigned threads_parameter(const Element& config) {
    const Element* t = config.child("threads");
    if (!t) return usable_cpus();
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(t->text(), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < t->text().size() && std::isspace(static_cast<unsigned char>(t->text()[used]))) {
      ++used;
    }
    if (used == 0 || used != t->text().size() || n < 1 || n > 256) {
      throw Error(t->where(),
                  fmt::format("Physics: <threads> must be a whole number from 1 to 256, found '{}'",
                              t->text()));
    }
    return static_cast<unsigned>(n);
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
    r.each_new<c::DetachableJoint>(add);  // a weld to add or drop; attaching only switches it
    r.each_removed<c::DetachableJoint>(add);
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
  // Islands (components::PhysicsIslands): sorted by their models.
  std::vector<Island> islands_;
  std::vector<Island> parked_;  // islands of the first build dissolved since (for reset)
  unsigned threads_ = 1;        // threads that step islands (<threads>)
  std::unique_ptr<TaskPool> pool_;
  std::vector<std::exception_ptr> errors_;  // per island, of the last parallel step
  bool islands_wanted_ = false, decided_ = false;
  std::vector<std::pair<ecs::Entity, ecs::Entity>> bonds_;  // models a world joint binds
  // partition()'s scratch: per moving model (entry), its box, island, model; union-find.
  std::vector<Aabb> boxes_;
  std::vector<int> entry_island_, uf_, order_, root_island_;
  std::vector<ecs::Entity> entry_model_;
  std::vector<ecs::Entity> static_geoms_;
  std::unordered_set<ecs::Entity> owned_links_, owned_joints_;  // moving, in some island
  bool commands_checked_ = false;          // step_islands checked the commands' entities at
  std::uint64_t commands_epoch_ = 0;       // this Registry::layout_epoch, since the last build
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
