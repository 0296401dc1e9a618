#pragma once
// The state channel's entities and its message layout (src/record/README.md, "The state
// channel"), shared by the recorder, which encodes it, and replay, which applies it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ignition/math/Pose3.hh>

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::record::detail {

// What each entity of a state message carries: a presence byte (and a rotor count), and the
// present values' doubles, which format 2 writes after every entity's presence byte, split into
// their high and low bytes (src/record/README.md, "The state channel").
enum StateBits : std::uint8_t {
  kHasWorldPose = 1,     // 7 doubles: x y z qw qx qy qz [m] (world frame)
  kHasPose = 2,          // 7 doubles: the pose relative to the parent entity
  kHasLinearVel = 4,     // links: 3 doubles, WorldLinearVelocity [m/s]
  kHasAngularVel = 8,    // links: 3 doubles, WorldAngularVelocity [rad/s]
  kHasRotors = 16,       // models: uint16 N, then N doubles, RotorVelocities [rad/s]
  // Format 2: no pose follows, it is the one its parent's and its own world pose give
  // (state_pose_from_parent), bit for bit what the recorded registry held.
  kPoseFromParent = 32,
};
inline constexpr std::uint8_t kStateBitsV1 = 31;  // the bits format 1 knows
inline constexpr std::uint8_t kStateBitsV2 = 63;

// The first byte of a state message.
enum StateKind : std::uint8_t {
  kStateSample = 0,   // one sample of every entity of the layout, in its order
  kStateEnd = 1,      // the world's models changed (spawned or removed): no samples follow
};

// The moving part of a world: every model directly under the world that is not static, and
// each model and link inside it, in registry order (models first, then links).
struct StateEntities {
  std::vector<ecs::Entity> models, links;
};
StateEntities state_entities(const ecs::Registry& reg, ecs::Entity world);

// Whose world pose an entity's relative pose is taken from, by the layout's scoped names
// (models, then links): the index of its parent model among the models, kUnderWorld for a
// model directly under the world, kNoParent when its parent is no model of the layout.
inline constexpr int kUnderWorld = -1, kNoParent = -2;
std::vector<int> state_parents(const std::vector<std::string>& models,
                               const std::vector<std::string>& links);

// The pose relative to its parent of an entity whose world pose is X_WE: X_WE itself under
// the world, else compose(inverse(X_WP), X_WE) with the parent's world pose X_WP — the
// operations physics (src/physics/mujoco/mujoco_engine.cc, read_state) computes a model's and a
// link's Pose with, so that the same doubles give the same bits.
ignition::math::Pose3d state_pose_from_parent(const ignition::math::Pose3d* X_WP,
                                              const ignition::math::Pose3d& X_WE);

// Makes the file's kStateSample messages (format 2) of captured ones (StateEncoder::capture:
// the kind, each entity's presence byte as the registry has it and its rotor count, then every
// present double whole, in the order format 2 reads them). Leaves out the Poses
// state_pose_from_parent gives bit for bit (kPoseFromParent) and splits the doubles. Reads
// nothing but the captured bytes: the recorder runs it on its writer's thread.
class StateFinisher {
 public:
  StateFinisher() = default;
  // `parents`: per entity (models, then links), state_parents, kept only where the registry's
  // parent is that model (or the world).
  StateFinisher(std::vector<int> parents, std::size_t models);
  void operator()(std::string_view captured, std::string& out);

 private:
  std::vector<int> parents_;
  std::size_t models_ = 0;
  // Scratch, per sample: each model's world pose's inverse and whether it has one; the doubles.
  std::vector<ignition::math::Pose3d> inverse_;
  std::vector<bool> has_world_pose_;
  std::vector<double> values_;
};

// Captures the state of `entities` as the registry holds it, every step: the entities'
// component pointers are kept while the registry's layout stands still
// (Registry::layout_epoch), and a sample is written into a buffer that keeps its capacity.
class StateEncoder {
 public:
  StateEncoder() = default;
  StateEncoder(const ecs::Registry& reg, StateEntities entities);
  const StateEntities& entities() const { return entities_; }
  // The size of a captured sample of now (what the finisher makes the file's sample of);
  // capture(out) then writes that many bytes at `out`, until the registry changes.
  // @throws Error when a model has more rotor speeds than a sample holds.
  std::size_t prepare(const ecs::Registry& reg);
  void capture(char* out) const;
  // The finisher of this encoder's captured samples (copied for the thread that runs it).
  const StateFinisher& finisher() const { return finish_; }
  // capture, then finish: one sample of now as the file holds it, into `out`.
  void encode(const ecs::Registry& reg, std::string& out);

 private:
  // The components a sample reads of one entity (nullptr: the entity lacks it).
  struct Refs {
    const components::WorldPose* world_pose = nullptr;
    const components::Pose* pose = nullptr;
    const components::RotorVelocities* rotors = nullptr;            // models
    const components::WorldLinearVelocity* linear_vel = nullptr;    // links
    const components::WorldAngularVelocity* angular_vel = nullptr;  // links
    std::uint8_t bits = 0;  // its presence byte (StateBits)
  };
  void refresh(const ecs::Registry& reg);
  StateEntities entities_;
  std::vector<Refs> refs_;  // models', then links'
  StateFinisher finish_;
  std::size_t header_size_ = 0;    // the kind, the presence bytes and rotor counts
  std::size_t fixed_doubles_ = 0;  // a sample's doubles but the rotor speeds
  std::size_t size_ = 0;           // prepare's
  std::string captured_;           // encode's
  std::uint64_t epoch_ = ~0ull;
};

}  // namespace kestrel::record::detail
