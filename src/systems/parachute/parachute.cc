// ParachuteSystem: PX4-Autopilot's parachute plugin for Gazebo, as it computes: a Double above the threshold on the trigger topic deploys the
// canopy (latched until reset); from the next step on the link feels the drag
// F = −½·ρ·CdA·|v|·v of its air-relative velocity (ρ = 1.225 kg/m³, PX4's constant) and the
// damping torque −c·ω.

#include "parachute/parachute.h"

#include <spdlog/spdlog.h>

#include <string>

#include "common/drive.h"
#include "common/fluid.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

constexpr double kAirDensity = 1.225;  // [kg/m³], PX4's plugin constant

class Parachute final : public System,
                        public ISystemConfigure,
                        public ISystemPreUpdate,
                        public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "ParachuteSystem");
    link_ = find_link(r, model_, config.get_or<std::string>("link_name", "base_link"), config,
                      "link_name");
    threshold_ = get_finite_or(config, "trigger_threshold", 0.0);
    cd_a_ = get_positive_or(config, "cd_a", 1.3, true);
    damping_ = get_positive_or(config, "angular_damping", 1.0, true);
    std::string topic;
    if (const Element* t = config.child("trigger_topic")) {
      topic = t->value<std::string>();
      if (config.child("servo_index")) {
        spdlog::warn("{}: ParachuteSystem: <servo_index> is ignored, <trigger_topic> is given",
                     config.child("servo_index")->where());
      }
    } else {
      // PX4 maps SIM_GZ_SV_FUNCn to servo_<n−1>: 6 is SIM_GZ_SV_FUNC7.
      const int servo = config.get_or<int>("servo_index", 6);
      topic = "/model/" + model_name(r, model_) + "/servo_" + std::to_string(servo);
    }
    reject_unknown_parameters(config, "ParachuteSystem",
                              "link_name, trigger_threshold, cd_a, angular_damping, "
                              "trigger_topic, servo_index");
    trigger_.topic = topic;
    add_command_input(r, model_, trigger_);
    world_ = world_of(r, model_);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
    where_ = config.where();
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    double value = 0;
    const auto before = trigger_.seen;
    read_command(r, model_, trigger_, value);
    if (trigger_.seen != before && value > threshold_ && !deployed_) {
      deployed_ = true;  // a released parachute cannot be stowed again
      first_ = true;
    }
    if (info.paused || !deployed_) return;
    if (first_) {  // PX4's plugin starts pulling one step after the trigger
      first_ = false;
      spdlog::info("{}: ParachuteSystem: parachute of '{}' deployed", where_,
                   r.scoped_name(model_));
      return;
    }
    const auto* v = r.try_get<c::WorldLinearVelocity>(link_);
    if (!v) return;
    const Vector3d air = v->value - air_velocity(r, world_);
    Vector3d torque;
    if (const auto* w = r.try_get<c::WorldAngularVelocity>(link_)) torque = -damping_ * w->value;
    auto& wrench = r.get<c::ExternalWorldWrenchCmd>(link_);
    wrench.force += -0.5 * kAirDensity * cd_a_ * air.Length() * air;
    wrench.torque += torque;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    deployed_ = first_ = false;
    trigger_.seen = 0;
  }

 private:
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity, world_ = ecs::kNullEntity;
  CommandInput trigger_;
  double threshold_ = 0, cd_a_ = 0, damping_ = 0;
  bool deployed_ = false, first_ = false;
  std::string where_;
};

}  // namespace

std::unique_ptr<System> make_parachute() { return std::make_unique<Parachute>(); }

}  // namespace kestrel::systems
