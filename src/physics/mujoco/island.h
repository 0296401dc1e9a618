#pragma once
// The MuJoCo engine for one physics island (components/physics_islands.h): the moving links and
// joints of a set of top-level models, and every static one. Commands are read from the
// island's own links and joints only; one-shot commands (resets, WorldPoseCmd) are left in the
// registry and contacts on static geoms are not cleared: the Physics system does both once per
// step for all islands. Islands that merge or split hand their state on through CarriedState.
// An island's step reads the registry and writes only its own entities' components, so islands
// may step concurrently.

#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <memory>
#include <unordered_map>
#include <vector>

#include "kestrel/components/physics.h"
#include "kestrel/ecs/entity.h"
#include "kestrel/physics/physics.h"

namespace kestrel::physics {

/// The state of links and joints by entity, handed from the islands that dissolve to the ones
/// built from their models: free-joint and joint coordinates (MuJoCo's qpos and qvel layout per
/// entity) and the reference (zero joint position) world poses joint coordinates refer to.
struct CarriedState {
  std::unordered_map<ecs::Entity, std::vector<double>> q, v;
  std::unordered_map<ecs::Entity, ignition::math::Pose3d> reference;
};

/// An axis-aligned box in the world [m]; empty while lo > hi.
struct Aabb {
  ignition::math::Vector3d lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  bool empty() const { return lo.X() > hi.X(); }
};

class IslandEngine : public PhysicsEngine {
 public:
  /// Builds from the registry with the state in `carried` for the entities it lists (the others
  /// start from their registry pose at rest).
  virtual void build_from(ecs::Registry& registry, ecs::Entity world,
                          const CarriedState& carried) = 0;
  /// Adds this island's state to `out`.
  virtual void save_state(CarriedState& out) const = 0;
  /// The island's top-level models, sorted.
  virtual const std::vector<ecs::Entity>& members() const = 0;
  /// Appends one box per member: its collision geoms at the current state, each grown by the
  /// distance any of its points can travel in `dt` at the current velocities.
  virtual void bounds(double dt, std::vector<Aabb>& out) const = 0;
  /// The contacts of the last step on static geoms (each island holds every static geom): the
  /// Physics system adds them to the geoms' Contacts in island order, so that islands stepping
  /// on different threads never write the same component.
  virtual const std::vector<std::pair<ecs::Entity, components::ContactPoint>>& static_contacts()
      const = 0;
};

/// The whole-world engine with room for `extra_contacts` more contacts from the start than can
/// occur at the build's state (tests compare it with an engine that grows its buffers).
std::unique_ptr<PhysicsEngine> make_mujoco_engine_with_room(int extra_contacts);

/// `models`: top-level moving models, sorted.
std::unique_ptr<IslandEngine> make_mujoco_island(std::vector<ecs::Entity> models);

}  // namespace kestrel::physics
