// Px4AirSpeed: PX4-Autopilot's airspeed plugin for Gazebo, as it computes, every PreUpdate from the state the step starts with:
//   air-relative velocity v − wind (world) → its x component u in the link's frame
//   → ρ of PX4's troposphere at 488 m + the link's world z → sign(u)·½·ρ·u² + N(0, 1 Pa)
// written as the link's components::AirSpeedReading, which the PX4 bridge sends as HIL_SENSOR
// diff_pressure.

#include "px4_airspeed/px4_airspeed.h"

#include <cmath>
#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/plugin_params.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/sensors.h"
#include "kestrel/components/world.h"
#include "kestrel/sim/events.h"
#include "sensors/noise/noise.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

// PX4's constants (AirSpeed.hpp): home altitude AMSL (Irchel Park, Zurich), the troposphere.
constexpr double kHomeAltitude = 488.0;      // [m]
constexpr double kTemperatureMsl = 288.15;   // [K]
constexpr double kLapseRate = 0.0065;        // [K/m]
constexpr double kAirDensityMsl = 1.225;     // [kg/m³]
constexpr double kDensityExponent = 4.256;   // ρ = ρ0 / (T0 / T)^4.256
constexpr double kNoiseStddev = 1.0;         // [Pa] (PX4: 0.01 hPa)

class Px4AirSpeed final : public System,
                          public ISystemConfigure,
                          public ISystemPreUpdate,
                          public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus& events) override {
    require_model(r, entity, config, "px4::AirSpeed");
    link_ = find_link(r, entity, config.get<std::string>("link_name"), config, "link_name");
    reject_unknown_parameters(config, "px4::AirSpeed", "link_name");
    if (r.has<c::AirSpeedReading>(link_)) {
      throw Error(config.where(), "px4::AirSpeed: link '" + r.scoped_name(link_) +
                                      "' already has an airspeed reading (a second "
                                      "px4::AirSpeed on it)");
    }
    world_ = world_of(r, entity);
    scoped_ = r.scoped_name(link_);
    const auto* s = r.try_get<c::WorldSeed>(world_);
    initial_seed_ = s ? s->value : 0;
    seed(initial_seed_);
    reseed_ = events.subscribe<sim::WorldSeedChanged>(
        [this](const sim::WorldSeedChanged& e) { seed(e.seed); });
    c::AirSpeedReading reading;
    reading.variance = kNoiseStddev * kNoiseStddev;
    r.add<c::AirSpeedReading>(link_, reading);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    const auto* pose = r.try_get<c::WorldPose>(link_);
    if (!pose) return;  // a link Physics does not move yet
    const auto* vel = r.try_get<c::WorldLinearVelocity>(link_);
    const Vector3d v_W = vel ? vel->value : Vector3d::Zero;
    // Air density at the local altitude: PX4's troposphere from its fixed home altitude.
    const double temperature = kTemperatureMsl - kLapseRate * (kHomeAltitude + pose->value.Pos().Z());
    const double density = kAirDensityMsl / std::pow(kTemperatureMsl / temperature, kDensityExponent);
    // Air-relative velocity along the link's x axis.
    const double u = pose->value.Rot().RotateVectorReverse(v_W - air_velocity(r, world_)).X();
    const double sign = (u > 0) - (u < 0);
    auto& out = r.get<c::AirSpeedReading>(link_);
    out.diff_pressure = sign * 0.5 * density * u * u + kNoiseStddev * rng_.normal();
    out.temperature = temperature;
    out.density = density;
    out.stamp = info.sim_time;
    ++out.sequence;
    r.mark_changed<c::AirSpeedReading>(link_);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { seed(initial_seed_); }

 private:
  void seed(std::uint64_t world_seed) {
    rng_ = sensors::Rng(sensors::derive_seed(world_seed, scoped_, "px4_airspeed/diff_pressure"));
  }

  ecs::Entity link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  std::string scoped_;
  std::uint64_t initial_seed_ = 0;
  sim::EventBus::Subscription reseed_;
  sensors::Rng rng_;
};

}  // namespace

std::unique_ptr<System> make_px4_airspeed() { return std::make_unique<Px4AirSpeed>(); }

}  // namespace kestrel::systems
