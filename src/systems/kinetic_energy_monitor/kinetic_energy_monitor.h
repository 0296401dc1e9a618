#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// Gazebo's `gz-sim-kinetic-energy-monitor-system` / KineticEnergyMonitor. See README.md.
std::unique_ptr<System> make_kinetic_energy_monitor();

/// Gazebo's Link::WorldKineticEnergy: ½ m v_c² + ½ ωᵀ I_W ω from the link's Inertial, WorldPose,
/// WorldLinearVelocity (origin) and WorldAngularVelocity [J].
double world_kinetic_energy(const ecs::Registry& r, ecs::Entity link);

}  // namespace kestrel::systems
