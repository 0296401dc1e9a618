#pragma once
/// @file PhysicsIslands: the world's opt-in to one physics model per moving vehicle.

namespace kestrel::components {

/// Tag on the world entity (SDF `<kestrel:physics_islands/>` in `<world>`): Physics simulates each
/// top-level moving model in its own MuJoCo model together with every static model, instead of
/// one model for the whole world. Moving models then never collide with each other (each still
/// collides with the static world), so use it only where they cannot meet (make-swarm's vehicles
/// fly in their own cells). It keeps a swarm's step linear in its size and lifts MuJoCo 2.2's
/// 2 GiB data limit (~600 X3s in one model). See src/physics/README.md, "Islands".
struct PhysicsIslands {};

}  // namespace kestrel::components
