// The state channel's samples (src/record/state.h, src/record/README.md "The state channel").
#include "record/state.h"

#include "kestrel/components/model.h"
#include "kestrel/components/multicopter.h"
#include "kestrel/components/physics.h"
#include "record/bytes.h"

namespace kestrel::record::detail {

namespace c = kestrel::components;

StateEntities state_entities(const ecs::Registry& reg, ecs::Entity world) {
  StateEntities out;
  for (ecs::Entity m : reg.children(world)) {
    if (!reg.has<c::Model>(m) || reg.removal_pending(m)) continue;
    if (const auto* s = reg.try_get<c::Static>(m); s && s->value) continue;
    out.models.push_back(m);
    for (ecs::Entity d : reg.descendants(m)) {
      if (reg.has<c::Model>(d)) out.models.push_back(d);
      if (reg.has<c::Link>(d)) out.links.push_back(d);
    }
  }
  return out;
}

namespace {

void put_pose(std::string& out, const ignition::math::Pose3d& p) {
  for (double v : {p.Pos().X(), p.Pos().Y(), p.Pos().Z(), p.Rot().W(), p.Rot().X(), p.Rot().Y(),
                   p.Rot().Z()}) {
    put<double>(out, v);
  }
}
void put_vector(std::string& out, const ignition::math::Vector3d& v) {
  put<double>(out, v.X());
  put<double>(out, v.Y());
  put<double>(out, v.Z());
}

}  // namespace

void encode_state(const ecs::Registry& reg, const StateEntities& entities, std::string& out) {
  out.clear();
  out.push_back(static_cast<char>(kStateSample));
  for (ecs::Entity e : entities.models) {
    const auto* wp = reg.try_get<c::WorldPose>(e);
    const auto* p = reg.try_get<c::Pose>(e);
    const auto* rotors = reg.try_get<c::RotorVelocities>(e);
    out.push_back(static_cast<char>((wp ? kHasWorldPose : 0) | (p ? kHasPose : 0) |
                                    (rotors ? kHasRotors : 0)));
    if (wp) put_pose(out, wp->value);
    if (p) put_pose(out, p->value);
    if (rotors) {
      put<std::uint16_t>(out, static_cast<std::uint16_t>(rotors->velocity.size()));
      for (double w : rotors->velocity) put<double>(out, w);
    }
  }
  for (ecs::Entity e : entities.links) {
    const auto* wp = reg.try_get<c::WorldPose>(e);
    const auto* p = reg.try_get<c::Pose>(e);
    const auto* v = reg.try_get<c::WorldLinearVelocity>(e);
    const auto* w = reg.try_get<c::WorldAngularVelocity>(e);
    out.push_back(static_cast<char>((wp ? kHasWorldPose : 0) | (p ? kHasPose : 0) |
                                    (v ? kHasLinearVel : 0) | (w ? kHasAngularVel : 0)));
    if (wp) put_pose(out, wp->value);
    if (p) put_pose(out, p->value);
    if (v) put_vector(out, v->value);
    if (w) put_vector(out, w->value);
  }
}

}  // namespace kestrel::record::detail
