#include "common/fluid.h"

#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::systems {

namespace c = kestrel::components;

ecs::Entity world_of(const ecs::Registry& r, ecs::Entity e) {
  while (e != ecs::kNullEntity && !r.has<c::World>(e)) e = r.parent(e);
  return e;
}

ignition::math::Vector3d air_velocity(const ecs::Registry& r, ecs::Entity world) {
  ignition::math::Vector3d v;
  if (world == ecs::kNullEntity) return v;
  if (const auto* w = r.try_get<c::Wind>(world)) v = w->linear_velocity;
  if (const auto* g = r.try_get<c::WindGust>(world)) v += g->linear_velocity;
  return v;
}

void add_wrench_at(ecs::Registry& r, ecs::Entity link, ignition::math::Vector3d force,
                   ignition::math::Vector3d torque, const ignition::math::Vector3d& arm_W) {
  force.Correct();
  torque.Correct();
  auto& w = r.get<c::ExternalWorldWrenchCmd>(link);
  w.force += force;
  w.torque += torque + arm_W.Cross(force);
}

}  // namespace kestrel::systems
