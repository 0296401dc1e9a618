// Drawn values into the registry of a loaded, not yet configured, world.
#include "kestrel/batch/apply.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <string_view>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"

namespace kestrel::batch {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

Vector3d& wind_of(ecs::Registry& r, ecs::Entity world) {
  if (!r.has<c::Wind>(world)) r.add<c::Wind>(world, c::Wind{});
  return r.get<c::Wind>(world).linear_velocity;
}

void set_mass(const Value& v, ecs::Registry& r, ecs::Entity world) {
  if (!(v.value > 0))
    throw Error(v.where, fmt::format("{}: mass must be > 0 kg, drew {}", v.key, v.value));
  std::string scoped = r.scoped_name(world);
  std::string path = v.key.substr(5);
  for (std::size_t pos = 0; (pos = path.find('/', pos)) != std::string::npos;) {
    path.replace(pos, 1, "::");
  }
  scoped += "::" + path;
  const ecs::Entity link = r.find_scoped(scoped);
  if (link == ecs::kNullEntity || !r.has<c::Link>(link) || !r.has<c::Inertial>(link)) {
    throw Error(v.where, fmt::format("{}: the world has no link '{}'", v.key, scoped));
  }
  auto& inertial = r.get<c::Inertial>(link).value;
  auto mm = inertial.MassMatrix();
  const double ratio = v.value / mm.Mass();
  mm.SetMass(v.value);
  mm.SetDiagonalMoments(mm.DiagonalMoments() * ratio);
  mm.SetOffDiagonalMoments(mm.OffDiagonalMoments() * ratio);
  inertial.SetMassMatrix(mm);
}

// X_AC from X_AB and X_BC, spelt out (the usual composition of poses), and X_BA from X_AB.
ignition::math::Pose3d compose(const ignition::math::Pose3d& X_AB,
                               const ignition::math::Pose3d& X_BC) {
  return {X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()), X_AB.Rot() * X_BC.Rot()};
}
ignition::math::Pose3d inverse(const ignition::math::Pose3d& X_AB) {
  const auto q = X_AB.Rot().Inverse();
  return {-q.RotateVector(X_AB.Pos()), q};
}

// The models directly under `parent`, by name (for an error naming what exists).
std::string models_under(const ecs::Registry& r, ecs::Entity parent) {
  std::string names;
  for (const ecs::Entity e : r.children(parent)) {
    if (!r.has<c::Model>(e)) continue;
    const auto* n = r.try_get<c::Name>(e);
    names += (names.empty() ? "" : ", ") + (n ? n->value : std::string("?"));
  }
  return names.empty() ? "none" : names;
}

// The model at `path` ("x3", nested "a/b") below the world, or an Error naming `v`'s line and
// the models where the path ends.
ecs::Entity find_model(std::string_view path, const ecs::Registry& r, ecs::Entity world,
                       const Value& v) {
  std::string scoped = r.scoped_name(world);
  ecs::Entity model = world;
  for (std::size_t start = 0; start <= path.size();) {
    const auto slash = std::min(path.find('/', start), path.size());
    const std::string name(path.substr(start, slash - start));
    const ecs::Entity e = r.child_by_name(model, name);
    if (e == ecs::kNullEntity || !r.has<c::Model>(e)) {
      throw Error(v.where,
                  fmt::format("{}: the world has no model '{}' (models in '{}': {})", v.key,
                              scoped + "::" + name, scoped, models_under(r, model)));
    }
    scoped += "::" + name;
    model = e;
    start = slash + 1;
  }
  return model;
}

// pose/MODEL[/NESTED...]/C values of one model, applied together: the model's world pose
// (X_WM) gets the components given, the rest kept from the world file; the model's Pose
// (relative to its parent) follows, and every entity below it (links, joints, collisions,
// visuals, sensors, frames, nested models) keeps its pose relative to the model, so its
// WorldPose moves with it: physics builds the bodies from the links' WorldPose at configure.
void set_pose(const std::string& path, const std::vector<const Value*>& values, ecs::Registry& r,
              ecs::Entity world) {
  const Value& first = *values.front();
  const ecs::Entity model = find_model(path, r, world, first);
  const ecs::Entity parent = r.parent(model);
  const std::string scoped = r.scoped_name(model);
  auto* wp = r.try_get<c::WorldPose>(model);
  const auto* wp_parent = r.try_get<c::WorldPose>(parent);
  if (!wp || !wp_parent || !r.has<c::Pose>(model)) {
    throw Error(first.where, fmt::format("{}: the model '{}' has no pose", first.key, scoped));
  }
  const ignition::math::Pose3d X_WM_old = wp->value;
  ignition::math::Vector3d pos = X_WM_old.Pos();
  ignition::math::Vector3d rpy = X_WM_old.Rot().Euler();
  for (const Value* v : values) {
    const std::string comp = v->key.substr(v->key.rfind('/') + 1);
    const double deg = v->value * std::numbers::pi / 180;
    if (comp == "x" || comp == "y" || comp == "z") {
      if (!(std::abs(v->value) <= c::kMaxWorldCoordinate)) {
        throw Error(v->where, fmt::format("{}: a world coordinate within +-{:g} m needed, drew {}",
                                          v->key, c::kMaxWorldCoordinate, v->value));
      }
      (comp == "x" ? pos.X() : comp == "y" ? pos.Y() : pos.Z()) = v->value;
    } else if (comp == "roll") {
      rpy.X() = deg;
    } else if (comp == "pitch") {
      rpy.Y() = deg;
    } else {
      KESTREL_DEMAND(comp == "yaw");
      rpy.Z() = deg;
    }
  }
  const ignition::math::Pose3d X_WM(pos, ignition::math::Quaterniond(rpy));
  const ignition::math::Pose3d X_MW_old = inverse(X_WM_old);
  for (const ecs::Entity e : r.descendants(model)) {
    if (auto* d = r.try_get<c::WorldPose>(e)) d->value = compose(X_WM, compose(X_MW_old, d->value));
  }
  wp->value = X_WM;
  r.get<c::Pose>(model).value = compose(inverse(wp_parent->value), X_WM);
}

}  // namespace

void apply_values(std::span<const Value> values, ecs::Registry& r, ecs::Entity world) {
  // Speed and direction are applied together (in either order in the plan).
  const Value* speed = nullptr;
  const Value* direction = nullptr;
  // A model's pose components together (in plan order within the model), models in name order.
  std::map<std::string, std::vector<const Value*>> poses;
  for (const Value& v : values) {
    if (v.key == "wind_speed") {
      if (!(v.value >= 0)) {
        throw Error(v.where, fmt::format("wind_speed must be >= 0 m/s, drew {}", v.value));
      }
      speed = &v;
    } else if (v.key == "wind_direction") {
      direction = &v;
    } else if (v.key.starts_with("mass/")) {
      set_mass(v, r, world);
    } else if (v.key.starts_with("pose/")) {
      poses[v.key.substr(5, v.key.rfind('/') - 5)].push_back(&v);
    } else {
      check_key(v.key, v.where);
      KESTREL_DEMAND(false);
    }
  }
  for (const auto& [path, of_model] : poses) set_pose(path, of_model, r, world);
  if (!speed && !direction) return;
  Vector3d& w = wind_of(r, world);
  const double h = speed ? speed->value : std::hypot(w.X(), w.Y());
  double ex = 0, ey = -1;  // without a direction given or kept: from the north
  if (direction) {
    // Blowing towards direction + 180 deg: east component -sin, north component -cos.
    const double from = direction->value * std::numbers::pi / 180;
    ex = -std::sin(from);
    ey = -std::cos(from);
  } else if (const double h0 = std::hypot(w.X(), w.Y()); h0 > 0) {
    ex = w.X() / h0;
    ey = w.Y() / h0;
  }
  w.Set(ex * h, ey * h, w.Z());
}

std::span<const std::string_view> wind_readers() {
  // Every system that reads components::Wind, directly or through systems::air_velocity().
  static constexpr std::string_view kReaders[] = {
      "WindEffects",      "MulticopterMotorModel", "AirSpeed",
      "Px4Bridge",        "Px4AirSpeed",           "LiftDrag",
      "AdvancedLiftDrag", "GenericMotorModel",     "ParachuteSystem",
      "FixedWingControl", "FixedWingMission",
  };
  return kReaders;
}

void apply_values(std::span<const Value> values, sim::Runner& runner) {
  const auto wind = std::find_if(values.begin(), values.end(), [](const Value& v) {
    return v.key == "wind_speed" || v.key == "wind_direction";
  });
  if (wind != values.end()) {
    const auto& systems = runner.systems();
    const bool read = std::any_of(systems.begin(), systems.end(), [](const sim::SystemEntry& s) {
      if (!s.active || !s.name.starts_with("kestrel::systems::")) return false;
      const std::string_view name = std::string_view(s.name).substr(18);
      const auto readers = wind_readers();
      return std::find(readers.begin(), readers.end(), name) != readers.end();
    });
    if (!read) {
      std::string names;
      for (const std::string_view n : wind_readers())
        names += (names.empty() ? "" : ", ") + std::string(n);
      throw Error(wind->where,
                  fmt::format("{}: the world has no system that reads its wind (one of {}): every "
                              "run would fly in the same air",
                              wind->key, names));
    }
  }
  apply_values(values, runner.registry(), runner.world());
}

}  // namespace kestrel::batch
