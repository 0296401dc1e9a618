// BuoyancyEngine: a bladder whose volume V moves towards the commanded set point at no more
// than max_inflation_rate, pushing the link with −g·(ρ·V − ρ_f·V_neutral) (ρ = 0 above the
// surface when one is given), as gz-sim's BuoyancyEngine (Fortress) computes it. See README.md.

#include "buoyancy_engine/buoyancy_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"
#include "kestrel/components/world.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

class BuoyancyEngine final : public System,
                             public ISystemConfigure,
                             public ISystemPreUpdate,
                             public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "BuoyancyEngine");
    if (!config.child("link_name")) {
      throw Error(config.where(), "BuoyancyEngine must be attached to a link: <link_name>");
    }
    link_ = find_link(r, model_, config.get<std::string>("link_name"), config, "link_name");
    min_ = get_positive_or(config, "min_volume", 0.000030, true);
    max_ = get_positive_or(config, "max_volume", 0.000990, true);
    if (max_ < min_) {
      throw Error(config.where(), fmt::format("BuoyancyEngine: <max_volume> {} is below "
                                              "<min_volume> {}",
                                              max_, min_));
    }
    rho_ = get_positive_or(config, "fluid_density", 1000, true);
    initial_volume_ = min_;
    initial_set_point_ = 0.000030;  // Gazebo's initial set point without <default_volume>
    if (config.child("default_volume")) {
      initial_volume_ = initial_set_point_ = get_positive(config, "default_volume", true);
    }
    neutral_ = get_positive_or(config, "neutral_volume", 0.0003, true);
    rate_ = get_positive_or(config, "max_inflation_rate", 3e-6, true);
    if (config.child("surface")) surface_ = get_finite(config, "surface");
    std::string cmd = "/buoyancy_engine", status = "/buoyancy_engine/current_volume";
    if (const Element* ns = config.child("namespace")) {
      const auto n = ns->value<std::string>();
      cmd = as_valid_topic("/model/" + n + "/buoyancy_engine");
      status = as_valid_topic("/model/" + n + "/buoyancy_engine/current_volume");
    }
    reject_unknown_parameters(config, "BuoyancyEngine",
                              "link_name, namespace, min_volume, max_volume, default_volume, "
                              "neutral_volume, max_inflation_rate, fluid_density, surface");
    command_.topic = cmd;
    add_command_input(r, model_, command_);
    status_ = add_double_output(r, model_, status);
    world_ = world_of(r, model_);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
    reset({}, r);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    const auto before = command_.seen;
    double value = 0;
    read_command(r, model_, command_, value);
    if (command_.seen != before) set_point_ = std::min(std::max(min_, value), max_);
    if (info.paused) return;
    const auto* g = r.try_get<c::Gravity>(world_);
    if (!g) return;
    // Gazebo's dt is a float number of seconds.
    const double step = static_cast<float>(to_seconds(info.dt)) * rate_;
    if (volume_ < set_point_) {
      volume_ += std::min(step, set_point_ - volume_);
    } else if (volume_ > set_point_) {
      volume_ -= std::min(step, volume_ - set_point_);
    }
    auto& out = r.get<c::TopicOutputs>(model_).real.at(status_);
    out.value = volume_;
    ++out.sequence;
    double rho = rho_;
    if (surface_) {
      const auto* X = r.try_get<c::WorldPose>(link_);
      if (X && X->value.Pos().Z() >= *surface_) rho = 0;
    }
    r.get<c::ExternalWorldWrenchCmd>(link_).force += -g->value * (rho * volume_ - rho_ * neutral_);
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    volume_ = initial_volume_;
    set_point_ = initial_set_point_;
    command_.seen = 0;
  }

 private:
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  double min_ = 0, max_ = 0, rho_ = 0, neutral_ = 0, rate_ = 0;
  double initial_volume_ = 0, initial_set_point_ = 0, volume_ = 0, set_point_ = 0;
  std::optional<double> surface_;
  CommandInput command_;
  std::size_t status_ = 0;
};

}  // namespace

std::unique_ptr<System> make_buoyancy_engine() { return std::make_unique<BuoyancyEngine>(); }

}  // namespace kestrel::systems
