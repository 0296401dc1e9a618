#pragma once
// Registry → MJCF text (MuJoCo 2.2 has no model-building API). Does not include MuJoCo: the
// output is XML plus the records the engine needs to map MuJoCo indices back to entities.

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <string>
#include <unordered_map>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/physics/physics.h"

namespace kestrel::physics::mujoco {

/// A link as a MuJoCo body.
struct BodyRecord {
  ecs::Entity link = ecs::kNullEntity;
  std::string name;             // MJCF body name (the link's scoped name)
  bool dynamic = false;         // has degrees of freedom somewhere up its chain
  std::string free_joint;       // name of its free joint, empty if not a free root
  bool gravity = true;          // LinkGravity
  double mass = 0;              // [kg]
  ignition::math::Pose3d X_WL;  // reference world pose (all joints at zero)
};

/// A joint as zero (fixed), one or two MuJoCo joints.
struct JointRecord {
  ecs::Entity joint = ecs::kNullEntity;
  components::JointType type = components::JointType::kFixed;
  std::vector<std::string> names;  // MJCF joint names, one per axis (ball: one)
  std::vector<double> effort;      // per axis, < 0 = unlimited [N·m or N]
  std::vector<double> velocity;    // per axis, < 0 = unlimited [rad/s or m/s]
  ignition::math::Pose3d X_CJ;     // joint frame in the child link frame
  ignition::math::Pose3d X_WJ;     // reference world pose of the joint frame
  ecs::Entity child = ecs::kNullEntity;
};

/// A model (for its pose, teleports and velocity commands).
struct ModelRecord {
  ecs::Entity model = ecs::kNullEntity;
  ecs::Entity parent_model = ecs::kNullEntity;  // kNullEntity when directly under the world
  ecs::Entity canonical = ecs::kNullEntity;     // link whose motion the model frame follows
  ignition::math::Pose3d X_LM;                  // model frame in the canonical link frame
  bool dynamic = false;
};

/// A detachable joint (components::DetachableJoint) as a MuJoCo weld equality constraint.
struct WeldRecord {
  ecs::Entity entity = ecs::kNullEntity;  // the DetachableJoint's entity
  std::string name;                       // MJCF equality name
};

struct MeshFile {
  std::string vfs_name;  // name inside the MuJoCo VFS
  std::string path;      // file on disk
  std::string data;      // the bytes when converted (MSH), else empty: read `path`
  ecs::Entity collision = ecs::kNullEntity;  // the collision that uses it
};

struct MjcfModel {
  std::string xml;
  std::vector<MeshFile> meshes;
  std::vector<BodyRecord> bodies;  // in MJCF order (parents before children)
  std::vector<JointRecord> joints;
  std::vector<WeldRecord> welds;    // in MJCF order
  std::vector<ecs::Entity> geoms;   // collision entity per geom, in MJCF order
  std::vector<ModelRecord> models;  // parents before children
  std::vector<PhysicsIssue> issues;
  int njmax = 0, nconmax = 0;  // MuJoCo's constraint rows and contacts
  int rows_per_contact = 4;    // njmax = nconmax × rows_per_contact + extra_rows
  int extra_rows = 0;          // joint limits and friction, and a margin
  int moving_geoms = 0;        // collision geoms on moving bodies
  int dofs = 0;                // degrees of freedom (MuJoCo's nv)
  std::int64_t nstack = 0;     // MuJoCo stack entries Kestrel sets (<size nstack>), if <= INT_MAX
};

struct BuildOptions {
  /// Reference (zero joint position) world pose of links from an earlier build; links not
  /// listed use their WorldPose (or their Pose chain).
  const std::unordered_map<ecs::Entity, ignition::math::Pose3d>* reference_poses = nullptr;
  /// Mesh files referenced by absolute path instead of VFS names (for export).
  bool absolute_mesh_paths = false;
  /// Physics islands: only these top-level models' moving links and joints (and every static
  /// one) are built; sorted. nullptr: everything. A joint directly under the world belongs to
  /// the island of its child link's model.
  const std::vector<ecs::Entity>* island = nullptr;
  /// Room for this many contacts more than can occur at the current state (tests).
  int extra_contacts = 0;
};

/// MuJoCo 2.2's stack (in mjtNum) Kestrel sets for a model of nbody bodies (the world
/// included), ngeom geoms, nv degrees of freedom and njmax constraint rows (mjcf_builder.cc).
std::int64_t stack_size(std::int64_t nbody, std::int64_t ngeom, std::int64_t nv,
                        std::int64_t njmax);

/// Builds MJCF for every entity under `world`. Problems are collected in `issues`; the caller
/// throws if any is an error.
MjcfModel build_mjcf(const ecs::Registry& registry, ecs::Entity world,
                     const BuildOptions& options = {});

/// World pose of an entity: WorldPose if present, else the composition of Pose up the graph.
ignition::math::Pose3d world_pose_of(const ecs::Registry& registry, ecs::Entity e);

/// Throws an Error listing every error issue (none: returns).
void throw_on_errors(const std::vector<PhysicsIssue>& issues);

}  // namespace kestrel::physics::mujoco
