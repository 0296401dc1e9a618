#pragma once
/// @file PhysicsIslands: the world's choice between one physics model and proximity islands.

#include "kestrel/ecs/entity.h"

namespace kestrel::components {

/// On the world entity (SDF `<kestrel:physics_islands/>` in `<world>`, or
/// `<kestrel:physics_islands>false</kestrel:physics_islands>`): forces physics islands on or
/// off. Without it, Physics decides (islands above kAutoIslandModels moving top-level models).
///
/// With islands, the moving top-level models are partitioned by proximity: models whose bounding
/// boxes, inflated by a margin and their motion over the step, overlap share one MuJoCo model
/// (with every static model); islands merge when their models come near and split when they
/// separate, deterministically (a function of the state and the previous partition). Bodies
/// in different islands are never close enough to touch, so they collide exactly as in one
/// model. See src/physics/README.md, "Islands".
struct PhysicsIslands {
  bool enabled = true;
};

/// On every moving top-level model while Physics simulates islands: the island it is in, named
/// by the island's first (smallest) model entity; updated when islands merge or split.
struct PhysicsIsland {
  ecs::Entity first = ecs::kNullEntity;
};

/// Physics uses islands on its own above this many moving top-level models (a world of one
/// model that size would be slow to step or over MuJoCo 2.2's data limit).
inline constexpr int kAutoIslandModels = 500;

}  // namespace kestrel::components
