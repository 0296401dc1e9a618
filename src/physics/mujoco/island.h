#pragma once
// The MuJoCo engine for one physics island (components/physics_islands.h): `model`'s moving
// links and joints and every static one. Commands are read from the island's own links and
// joints only; one-shot commands (resets, WorldPoseCmd) are left in the registry and contacts on
// static geoms are not cleared: the Physics system does both once per step for all islands.

#include <memory>

#include "kestrel/ecs/entity.h"
#include "kestrel/physics/physics.h"

namespace kestrel::physics {

std::unique_ptr<PhysicsEngine> make_mujoco_island(ecs::Entity model);

}  // namespace kestrel::physics
