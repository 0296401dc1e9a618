#pragma once
/// @file The Physics system, its engine interface and the model-level tools the CLI uses
/// (`kestrel export-mjcf`, physics findings for `kestrel check`). Never includes MuJoCo.
///
/// The physics model is built from the registry (links, joints, collisions, inertials under the
/// world entity), not from SDF. See src/physics/README.md for the mapping to MuJoCo.

#include <memory>
#include <string>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/system.h"

namespace kestrel::physics {

/// Something the physics engine cannot represent (or represents only approximately).
struct PhysicsIssue {
  enum class Severity { kWarning, kError };
  Severity severity = Severity::kError;
  ecs::Entity entity = ecs::kNullEntity;  ///< the entity concerned (link, joint, collision...)
  std::string scoped_name;                ///< "world::model::link"
  std::string file;                       ///< from its SourceLocation, empty when unknown
  int line = 0;                           ///< from its SourceLocation, 0 when unknown
  std::string message;                    ///< what is not supported and what Kestrel does
};

/// "error: FILE:LINE: scoped::name: message" (parts omitted when unknown).
std::string format_issue(const PhysicsIssue& issue);

/// A physics engine: compiles the registry's world into its own model and steps it.
class PhysicsEngine {
 public:
  virtual ~PhysicsEngine() = default;
  /// (Re)builds the engine model from every entity under `world`. Links and joints that
  /// existed in the previous build keep their positions and velocities. Adds the state
  /// components (components/physics.h) to every simulated link, joint and collision and writes
  /// their current values. @throws Error (naming entities) if the world cannot be simulated.
  virtual void build(ecs::Registry& registry, ecs::Entity world) = 0;
  /// Applies the command components, advances `dt`, writes the state components.
  /// @throws Error naming the entity if the simulation becomes invalid (NaN, instability,
  ///         contact buffer full).
  virtual void step(Duration dt, ecs::Registry& registry) = 0;
  /// Returns exactly to the state right after the first build (model and data), so the next
  /// steps reproduce a fresh run bit for bit. Writes the state components.
  virtual void reset(ecs::Registry& registry) = 0;
  /// What the last build could not represent.
  virtual const std::vector<PhysicsIssue>& issues() const = 0;
  /// The engine's model in its own format (MJCF for MuJoCo), exactly as loaded.
  virtual const std::string& model_text() const = 0;
};

/// The MuJoCo 2.2 engine.
std::unique_ptr<PhysicsEngine> make_mujoco_engine();

/// The Physics system (priority −64): builds the engine at configure, rebuilds it when links,
/// joints or collisions are added or removed, steps it in Update, resets it exactly.
/// Gazebo's `gz-sim-physics-system` / `gz::sim::systems::Physics` map to it.
std::unique_ptr<System> make_physics_system();

/// The MJCF Kestrel simulates for the world in `registry` (what `kestrel export-mjcf` writes).
/// Mesh files are referenced by absolute path. @throws Error if the world cannot be simulated.
std::string export_mjcf(const ecs::Registry& registry, ecs::Entity world);

/// What MuJoCo cannot represent in this world, for `kestrel check` (does not load MuJoCo).
std::vector<PhysicsIssue> check_physics(const ecs::Registry& registry, ecs::Entity world);

}  // namespace kestrel::physics
