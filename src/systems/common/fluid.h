#pragma once
// What the aerodynamic and hydrodynamic systems (LiftDrag, AdvancedLiftDrag, Buoyancy,
// Hydrodynamics, Thruster) share: the world entity, the air's velocity, adding a wrench.

#include <ignition/math/Vector3.hh>
#include <string_view>

#include "kestrel/ecs/registry.h"

namespace kestrel::systems {

/// The world entity above `e` (kNullEntity if none).
ecs::Entity world_of(const ecs::Registry& r, ecs::Entity e);

/// Velocity of the air in the world frame [m/s]: the world's <wind> (components::Wind) plus an
/// injected gust (components::WindGust), zero without either.
ignition::math::Vector3d air_velocity(const ecs::Registry& r, ecs::Entity world);

/// Adds `force` and `torque` (world frame; non-finite components zeroed, as Gazebo's
/// Vector3::Correct) acting at `arm_W` from the link origin to the link's ExternalWorldWrenchCmd
/// (which must exist): torque about the origin += torque + arm_W × force.
void add_wrench_at(ecs::Registry& r, ecs::Entity link, ignition::math::Vector3d force,
                   ignition::math::Vector3d torque, const ignition::math::Vector3d& arm_W);

}  // namespace kestrel::systems
