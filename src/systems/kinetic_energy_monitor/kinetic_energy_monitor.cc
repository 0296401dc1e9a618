// KineticEnergyMonitor: publishes the drop of a link's kinetic energy in one step when it
// exceeds a threshold (a crash), as gz-sim's (Fortress) KineticEnergyMonitor does. See README.md.
#include "kinetic_energy_monitor/kinetic_energy_monitor.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {

namespace c = kestrel::components;

double world_kinetic_energy(const ecs::Registry& r, ecs::Entity link) {
  const auto& inertial = r.get<c::Inertial>(link).value;
  const auto& X_WL = r.get<c::WorldPose>(link).value;
  const auto& w = r.get<c::WorldAngularVelocity>(link).value;
  // Velocity of the centre of mass: v_o + ω × (R_WL p_LI).
  const auto v = r.get<c::WorldLinearVelocity>(link).value +
                 w.Cross(X_WL.Rot().RotateVector(inertial.Pose().Pos()));
  // Inertia about the centre of mass in world axes: R I Rᵀ with R = R_WL R_LI.
  const ignition::math::Matrix3d R(X_WL.Rot() * inertial.Pose().Rot());
  const ignition::math::Matrix3d I = R * inertial.MassMatrix().Moi() * R.Transposed();
  return 0.5 * (inertial.MassMatrix().Mass() * v.SquaredLength() + w.Dot(I * w));
}

namespace {

class KineticEnergyMonitor final : public System,
                                   public ISystemConfigure,
                                   public ISystemUpdate,
                                   public ISystemReset {
 public:
  // After Physics, with the sensors: the state of this step, published in its PostUpdate.
  int priority() const override { return priority::kPostPhysicsSensors; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "KineticEnergyMonitor");
    const auto name = config.get<std::string>("link_name");
    if (name.empty()) {
      throw Error(config.child("link_name")->where(), "KineticEnergyMonitor: <link_name> is empty");
    }
    link_ = find_link(r, entity, name, config, "link_name");
    threshold_ = config.get_or("kinetic_energy_threshold", 7.0);
    if (!std::isfinite(threshold_)) {
      throw Error(config.child("kinetic_energy_threshold")->where(),
                  "KineticEnergyMonitor: <kinetic_energy_threshold> must be a finite number [J]");
    }
    const auto topic = as_valid_topic(config.get_or<std::string>(
        "topic", fmt::format("/model/{}/kinetic_energy", model_name(r, entity))));
    out_ = add_double_output(r, entity, topic);
    reject_unknown_parameters(config, "KineticEnergyMonitor",
                              "link_name, kinetic_energy_threshold, topic");
  }

  void update(const UpdateInfo& info, ecs::Registry& r) override {
    if (info.paused) return;
    const double energy = world_kinetic_energy(r, link_);
    const double drop = previous_ - energy;
    previous_ = energy;
    if (drop <= threshold_) return;
    spdlog::info("{}: change in kinetic energy above threshold - deltaKE: {}",
                 r.scoped_name(model_), drop);
    auto& ch = r.get<c::TopicOutputs>(model_).real[out_];
    ch.value = drop;
    ++ch.sequence;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override { previous_ = 0; }

 private:
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::size_t out_ = 0;
  double threshold_ = 7, previous_ = 0;
};

}  // namespace

std::unique_ptr<System> make_kinetic_energy_monitor() {
  return std::make_unique<KineticEnergyMonitor>();
}

}  // namespace kestrel::systems
