// The state channel's samples (src/record/state.h, src/record/README.md "The state channel").
#include "record/state.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "kestrel/components/world.h"
#include "kestrel/core/error.h"
#include "physics/pose_math.h"
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

std::vector<int> state_parents(const std::vector<std::string>& models,
                               const std::vector<std::string>& links) {
  std::unordered_map<std::string_view, int> index;
  for (std::size_t i = 0; i < models.size(); ++i) index.emplace(models[i], static_cast<int>(i));
  std::vector<int> out;
  for (const auto* names : {&models, &links}) {
    for (const std::string& n : *names) {
      const std::size_t cut = n.rfind("::");
      const std::string_view parent =
          cut == std::string::npos ? std::string_view() : std::string_view(n).substr(0, cut);
      if (const auto it = index.find(parent); it != index.end()) {
        out.push_back(it->second);
      } else {
        // A model whose scoped name is `world::model` is directly under the world.
        const bool under_world = names == &models && cut != std::string::npos &&
                                 parent.find("::") == std::string_view::npos;
        out.push_back(under_world ? kUnderWorld : kNoParent);
      }
    }
  }
  return out;
}

ignition::math::Pose3d state_pose_from_parent(const ignition::math::Pose3d* X_WP,
                                              const ignition::math::Pose3d& X_WE) {
  return X_WP ? physics::compose(physics::inverse(*X_WP), X_WE) : X_WE;
}

StateEncoder::StateEncoder(const ecs::Registry& reg, StateEntities entities)
    : entities_(std::move(entities)) {
  std::vector<std::string> models, links;
  for (ecs::Entity e : entities_.models) models.push_back(reg.scoped_name(e));
  for (ecs::Entity e : entities_.links) links.push_back(reg.scoped_name(e));
  std::vector<int> parents = state_parents(models, links);
  // The names say whose pose a relative pose is taken from; kept only where the registry agrees
  // (a name with "::" in it could mislead them).
  std::size_t i = 0;
  for (const auto* es : {&entities_.models, &entities_.links}) {
    for (ecs::Entity e : *es) {
      int& p = parents[i++];
      const ecs::Entity parent = reg.parent(e);
      if (p >= 0 ? parent != entities_.models[static_cast<std::size_t>(p)]
                 : p == kUnderWorld && !reg.has<c::World>(parent)) {
        p = kNoParent;
      }
    }
  }
  finish_ = StateFinisher(std::move(parents), entities_.models.size());
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
  // What each entity carries, the header's size and the doubles apart from the rotor speeds
  // (whose count is read each time).
  header_size_ = 1;
  fixed_doubles_ = 0;
  for (Refs& r : refs_) {
    r.bits = static_cast<std::uint8_t>((r.world_pose ? kHasWorldPose : 0) | (r.pose ? kHasPose : 0) |
                                       (r.linear_vel ? kHasLinearVel : 0) |
                                       (r.angular_vel ? kHasAngularVel : 0) |
                                       (r.rotors ? kHasRotors : 0));
    header_size_ += 1 + (r.rotors ? 2 : 0);
    fixed_doubles_ += (r.world_pose ? 7 : 0) + (r.pose ? 7 : 0) + (r.linear_vel ? 3 : 0) +
                      (r.angular_vel ? 3 : 0);
  }
  epoch_ = reg.layout_epoch();
}

namespace {

// A pose's or a vector's doubles, in the sample's order, at `p`.
char* put_pose(char* p, const ignition::math::Pose3d& X) {
  p = put_at(p, X.Pos().X());
  p = put_at(p, X.Pos().Y());
  p = put_at(p, X.Pos().Z());
  p = put_at(p, X.Rot().W());
  p = put_at(p, X.Rot().X());
  p = put_at(p, X.Rot().Y());
  return put_at(p, X.Rot().Z());
}
char* put_vector(char* p, const ignition::math::Vector3d& w) {
  p = put_at(p, w.X());
  p = put_at(p, w.Y());
  return put_at(p, w.Z());
}
double get_double(const char* p) {
  double x;
  std::memcpy(&x, p, 8);
  return x;
}
ignition::math::Pose3d get_pose(const char* p) {
  return {get_double(p), get_double(p + 8), get_double(p + 16), get_double(p + 24),
          get_double(p + 32), get_double(p + 40), get_double(p + 48)};
}
// Bit for bit (also -0.0 against 0.0, and NaNs).
bool same_bits(const ignition::math::Pose3d& a, const ignition::math::Pose3d& b) {
  auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  return bits(a.Pos().X()) == bits(b.Pos().X()) && bits(a.Pos().Y()) == bits(b.Pos().Y()) &&
         bits(a.Pos().Z()) == bits(b.Pos().Z()) && bits(a.Rot().W()) == bits(b.Rot().W()) &&
         bits(a.Rot().X()) == bits(b.Rot().X()) && bits(a.Rot().Y()) == bits(b.Rot().Y()) &&
         bits(a.Rot().Z()) == bits(b.Rot().Z());
}

}  // namespace

std::size_t StateEncoder::prepare(const ecs::Registry& reg) {
  if (reg.layout_epoch() != epoch_) refresh(reg);
  std::size_t doubles = fixed_doubles_;
  for (std::size_t i = 0; i < refs_.size(); ++i) {
    if (!refs_[i].rotors) continue;
    const std::size_t n = refs_[i].rotors->velocity.size();
    if (n > 0xffff) {  // the count is a uint16: more would garble the sample
      throw Error(reg.describe(entities_.models[i]),
                  fmt::format("the state channel records at most 65535 rotor speeds of a model; "
                              "RotorVelocities has {}",
                              n));
    }
    doubles += n;
  }
  size_ = header_size_ + 8 * doubles;
  return size_;
}

void StateEncoder::capture(char* out) const {
  static_assert(std::endian::native == std::endian::little, "MCAP's numbers are little-endian");
  char* p = out;
  char* v = p + header_size_;
  *p++ = static_cast<char>(kStateSample);
  for (const Refs& r : refs_) {
    *p++ = static_cast<char>(r.bits);
    if (r.world_pose) v = put_pose(v, r.world_pose->value);
    if (r.pose) v = put_pose(v, r.pose->value);
    if (r.linear_vel) v = put_vector(v, r.linear_vel->value);
    if (r.angular_vel) v = put_vector(v, r.angular_vel->value);
    if (r.rotors) {
      const std::size_t n = r.rotors->velocity.size();
      p = put_at(p, static_cast<std::uint16_t>(n));
      std::memcpy(v, r.rotors->velocity.data(), 8 * n);
      v += 8 * n;
    }
  }
  KESTREL_DEMAND(v == out + size_);
}

void StateEncoder::encode(const ecs::Registry& reg, std::string& out) {
  captured_.resize(prepare(reg));
  capture(captured_.data());
  finish_(captured_, out);
}

StateFinisher::StateFinisher(std::vector<int> parents, std::size_t models)
    : parents_(std::move(parents)), models_(models), inverse_(models), has_world_pose_(models) {}

void StateFinisher::operator()(std::string_view in, std::string& out) {
  if (in.empty() || in[0] != static_cast<char>(kStateSample)) {  // kStateEnd
    out.assign(in);
    return;
  }
  // The captured header (the kind, then each entity's presence byte and rotor count) and, after
  // it, the doubles.
  std::size_t header = 1;
  for (std::size_t i = 0; i < parents_.size(); ++i) {
    KESTREL_DEMAND(header < in.size());
    header += 1 + (in[header] & kHasRotors ? 2 : 0);
  }
  KESTREL_DEMAND(header <= in.size() && (in.size() - header) % 8 == 0);
  const char* h = in.data() + 1;
  const char* v = in.data() + header;
  values_.resize((in.size() - header) / 8);  // at most
  double* w = values_.data();
  auto take = [&](std::size_t n) {  // the next n doubles kept
    std::memcpy(w, v, 8 * n);
    w += n;
    v += 8 * n;
  };
  // The same header, but presence bytes that say a pose is left out: at most its size, and 2
  // bytes the last double's 8-byte store spills into (cut below).
  out.resize(in.size() + 2);
  char* p = out.data();
  *p++ = static_cast<char>(kStateSample);
  for (std::size_t i = 0; i < parents_.size(); ++i) {
    const auto bits = static_cast<std::uint8_t>(*h++);
    const int parent = parents_[i];
    ignition::math::Pose3d X_WE;
    if (bits & kHasWorldPose) {
      X_WE = get_pose(v);
      take(7);
    }
    // Models come first: a parent's inverse is ready before its children need it.
    if (i < models_) {
      has_world_pose_[i] = (bits & kHasWorldPose) != 0;
      if (has_world_pose_[i]) inverse_[i] = physics::inverse(X_WE);
    }
    bool pose = (bits & kHasPose) != 0;
    if (pose && (bits & kHasWorldPose) && parent != kNoParent &&
        (parent == kUnderWorld || has_world_pose_[static_cast<std::size_t>(parent)])) {
      pose = !same_bits(get_pose(v),
                        parent == kUnderWorld
                            ? X_WE
                            : physics::compose(inverse_[static_cast<std::size_t>(parent)], X_WE));
    }
    *p++ = static_cast<char>((bits & kHasPose) && !pose ? (bits & ~kHasPose) | kPoseFromParent
                                                         : bits);
    if (bits & kHasPose) {
      if (pose) {
        take(7);
      } else {
        v += 8 * 7;
      }
    }
    take((bits & kHasLinearVel ? 3 : 0) + (bits & kHasAngularVel ? 3 : 0));
    if (bits & kHasRotors) {
      const auto n = get<std::uint16_t>(h);
      std::memcpy(p, h, 2);
      h += 2;
      p += 2;
      take(n);
    }
  }
  KESTREL_DEMAND(v == in.data() + in.size());
  // Each double split (src/record/README.md): its two high bytes (sign, exponent, the top of
  // the mantissa: alike from step to step, which zstd finds), then its six low bytes.
  const std::size_t n = static_cast<std::size_t>(w - values_.data());
  char* hi = p;
  char* lo = p + 2 * n;
#pragma GCC unroll 4
  for (std::size_t k = 0; k < n; ++k) {
    const auto b = std::bit_cast<std::uint64_t>(values_[k]);
    put_at(hi + 2 * k, static_cast<std::uint16_t>(b >> 48));
    put_at(lo + 6 * k, b);  // the low six bytes; the next double's overwrite the other two
  }
  out.resize(static_cast<std::size_t>(lo + 6 * n - out.data()));
}

}  // namespace kestrel::record::detail
