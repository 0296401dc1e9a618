// Thermal (gz::sim::systems::Thermal): the uniform temperature of a visual, and ThermalSensor
// (gz::sim::systems::ThermalSensor): a thermal camera's resolution and temperature range, both
// read by the Sensors system's thermal cameras (src/sensors/thermal/README.md).

#include <spdlog/spdlog.h>

#include <limits>

#include "kestrel/components/camera.h"
#include "kestrel/components/model.h"
#include "kestrel/components/sensors.h"
#include "kestrel/sensors/sensors.h"
#include "sensors/common/sensor_system.h"

namespace kestrel::sensors {
namespace {

namespace c = components;

// Written before any system configures (ISystemConfigurePriority): the Sensors system builds
// its scene, temperatures included, at its own configure.
class Thermal final : public System, public ISystemConfigurePriority {
 public:
  void configure_priority(ecs::Entity entity, const Element& config, ecs::Registry& r,
                          sim::EventBus&) override {
    if (const Element* h = config.child("heat_signature")) {
      throw Error(h->where(),
                  "Thermal: <heat_signature> (a texture of temperatures) is not supported: "
                  "Kestrel renders no textures; give a uniform <temperature> [K]");
    }
    const Element* t = config.child("temperature");
    if (!t) {
      throw Error(config.where(), "Thermal needs <temperature> (the visual's temperature [K])");
    }
    const double kelvin = t->value<double>();
    if (!std::isfinite(kelvin)) {
      throw Error(t->where(), "Thermal: <temperature> must be a finite number of kelvin");
    }
    for (const char* k : {"min_temp", "max_temp"}) {
      if (const Element* e = config.child(k)) {
        spdlog::warn(
            "{}: Thermal: <{}> is used with <heat_signature> only: ignored, as Gazebo "
            "does",
            e->where(), k);
      }
    }
    reject_unread(config, "expected <temperature>");
    if (kelvin < 0) {
      spdlog::warn(
          "{}: Thermal: a negative temperature ({} K) is below absolute zero: thermal "
          "cameras read 0 K, as Gazebo's do",
          t->where(), kelvin);
    }
    if (!r.has<c::Visual>(entity)) {
      spdlog::warn(
          "{}: Thermal on {}: Gazebo's renderer reads the temperature of visuals only; "
          "it has no effect here (declare it inside a <visual>)",
          config.where(), r.describe(entity));
      return;
    }
    r.set<c::Temperature>(entity, {kelvin});
  }
};

class ThermalSensor final : public System, public ISystemConfigurePriority {
 public:
  void configure_priority(ecs::Entity entity, const Element& config, ecs::Registry& r,
                          sim::EventBus&) override {
    const auto* s = r.try_get<c::Sensor>(entity);
    if (!s || (s->type != "thermal_camera" && s->type != "thermal")) {
      throw Error(config.where(),
                  "ThermalSensor configures a thermal_camera sensor: declare it "
                  "inside one (it is in " +
                      r.describe(entity) + ")");
    }
    c::ThermalCameraSettings settings;
    settings.resolution = config.get_or<double>("resolution", 0.0);
    if (config.child("min_temp") || config.child("max_temp")) {
      settings.has_range = true;
      settings.min_temp = config.get_or<double>("min_temp", 0.0);
      settings.max_temp = config.get_or<double>("max_temp", std::numeric_limits<double>::max());
    }
    reject_unread(config, "expected <resolution>, <min_temp>, <max_temp>");
    r.set<c::ThermalCameraSettings>(entity, settings);
  }
};

}  // namespace

std::unique_ptr<System> make_thermal_system() { return std::make_unique<Thermal>(); }
std::unique_ptr<System> make_thermal_sensor_system() { return std::make_unique<ThermalSensor>(); }

}  // namespace kestrel::sensors
