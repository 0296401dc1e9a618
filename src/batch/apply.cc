// Drawn values into the registry of a loaded, not yet configured, world.
#include "kestrel/batch/apply.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string_view>

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

}  // namespace

void apply_values(std::span<const Value> values, ecs::Registry& r, ecs::Entity world) {
  // Speed and direction are applied together (in either order in the plan).
  const Value* speed = nullptr;
  const Value* direction = nullptr;
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
    } else {
      check_key(v.key, v.where);
      KESTREL_DEMAND(false);
    }
  }
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
      "WindEffects",       "MulticopterMotorModel", "AirSpeed",        "Px4Bridge",
      "Px4AirSpeed",       "LiftDrag",              "AdvancedLiftDrag", "GenericMotorModel",
      "ParachuteSystem",   "FixedWingControl",      "FixedWingMission",
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
      for (const std::string_view n : wind_readers()) names += (names.empty() ? "" : ", ") + std::string(n);
      throw Error(wind->where,
                  fmt::format("{}: the world has no system that reads its wind (one of {}): every "
                              "run would fly in the same air",
                              wind->key, names));
    }
  }
  apply_values(values, runner.registry(), runner.world());
}

}  // namespace kestrel::batch
