#pragma once
// The state channel's entities and its message layout (src/record/README.md, "The state
// channel"), shared by the recorder, which encodes it, and replay, which applies it.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/ecs/registry.h"

namespace kestrel::record::detail {

// What each entity of a state message carries: a presence byte, then each present value.
enum StateBits : std::uint8_t {
  kHasWorldPose = 1,     // 7 doubles: x y z qw qx qy qz [m] (world frame)
  kHasPose = 2,          // 7 doubles: the pose relative to the parent entity
  kHasLinearVel = 4,     // links: 3 doubles, WorldLinearVelocity [m/s]
  kHasAngularVel = 8,    // links: 3 doubles, WorldAngularVelocity [rad/s]
  kHasRotors = 16,       // models: uint16 N, then N doubles, RotorVelocities [rad/s]
};

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

// One kStateSample message of `entities` as the registry holds them now.
void encode_state(const ecs::Registry& reg, const StateEntities& entities, std::string& out);

}  // namespace kestrel::record::detail
