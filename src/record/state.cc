// The state channel's samples (src/record/state.h, src/record/README.md "The state channel").
#include "record/state.h"

#include <bit>
#include <cstring>

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

void StateEncoder::refresh(const ecs::Registry& reg) {
  refs_.clear();
  for (ecs::Entity e : entities_.models) {
    refs_.push_back({reg.try_get<c::WorldPose>(e), reg.try_get<c::Pose>(e),
                     reg.try_get<c::RotorVelocities>(e), nullptr, nullptr});
  }
  for (ecs::Entity e : entities_.links) {
    refs_.push_back({reg.try_get<c::WorldPose>(e), reg.try_get<c::Pose>(e), nullptr,
                     reg.try_get<c::WorldLinearVelocity>(e),
                     reg.try_get<c::WorldAngularVelocity>(e)});
  }
  // What each entity carries and the sample's size apart from the rotor speeds (whose count is
  // read each time).
  fixed_size_ = 1;
  for (Refs& r : refs_) {
    r.bits = static_cast<std::uint8_t>((r.world_pose ? kHasWorldPose : 0) | (r.pose ? kHasPose : 0) |
                                       (r.linear_vel ? kHasLinearVel : 0) |
                                       (r.angular_vel ? kHasAngularVel : 0) |
                                       (r.rotors ? kHasRotors : 0));
    fixed_size_ += 1 + (r.world_pose ? 56 : 0) + (r.pose ? 56 : 0) + (r.linear_vel ? 24 : 0) +
                   (r.angular_vel ? 24 : 0) + (r.rotors ? 2 : 0);
  }
  epoch_ = reg.layout_epoch();
}

namespace {

// Little-endian doubles (MCAP's byte order, this host's), written at `p`: gathered into
// a local array and copied at once (a fixed-size copy the compiler turns into a few stores).
char* put_pose(char* p, const ignition::math::Pose3d& X) {
  const double v[7] = {X.Pos().X(), X.Pos().Y(), X.Pos().Z(), X.Rot().W(),
                       X.Rot().X(), X.Rot().Y(), X.Rot().Z()};
  std::memcpy(p, v, sizeof v);
  return p + sizeof v;
}
char* put_vector(char* p, const ignition::math::Vector3d& w) {
  const double v[3] = {w.X(), w.Y(), w.Z()};
  std::memcpy(p, v, sizeof v);
  return p + sizeof v;
}

}  // namespace

void StateEncoder::encode(const ecs::Registry& reg, std::string& out) {
  static_assert(std::endian::native == std::endian::little, "MCAP's doubles are little-endian");
  if (reg.layout_epoch() != epoch_) refresh(reg);
  // The size first, then every value written in place.
  std::size_t size = fixed_size_;
  for (const Refs& r : refs_) {
    if (r.rotors) size += 8 * r.rotors->velocity.size();
  }
  out.resize(size);
  char* p = out.data();
  *p++ = static_cast<char>(kStateSample);
  for (const Refs& r : refs_) {
    *p++ = static_cast<char>(r.bits);
    // In the order replay reads them (replay.cc).
    if (r.world_pose) p = put_pose(p, r.world_pose->value);
    if (r.pose) p = put_pose(p, r.pose->value);
    if (r.linear_vel) p = put_vector(p, r.linear_vel->value);
    if (r.angular_vel) p = put_vector(p, r.angular_vel->value);
    if (r.rotors) {
      const auto n = static_cast<std::uint16_t>(r.rotors->velocity.size());
      std::memcpy(p, &n, sizeof n);
      p += sizeof n;
      std::memcpy(p, r.rotors->velocity.data(), 8 * r.rotors->velocity.size());
      p += 8 * r.rotors->velocity.size();
    }
  }
}

}  // namespace kestrel::record::detail
