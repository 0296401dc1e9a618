// SpacecraftThrusterModel: gz-sim's and PX4-Autopilot's thruster of a spacecraft, as they
// compute it: the command u of one actuator sets a duty cycle of a PWM period 1/f; within each
// period the thruster pushes max_thrust along its link's +z at the link's centre of mass while
// the time since the period began is at most u/f, and nothing after. gz-sim's reads u from the
// Actuators message's `normalized`, PX4's from `velocity` divided by max_duty_cycle. See
// README.md.

#include "spacecraft_thruster_model/spacecraft_thruster_model.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
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

// Gazebo's and PX4's initial time into the cycle [s] (the plugin's member initialiser).
constexpr double kInitialSamplingTime = 0.01;

class SpacecraftThrusterModel final : public System,
                                      public ISystemConfigure,
                                      public ISystemPreUpdate,
                                      public ISystemReset {
 public:
  int priority() const override { return priority::kPrePhysics; }

  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "SpacecraftThrusterModel");
    where_ = config.where();
    // PX4's build of the plugin (libSpacecraftThrusterModelPlugin.so) reads the velocity
    // array over max_duty_cycle; gz-sim's (gz-sim-spacecraft-thruster-model-system) the
    // normalised one.
    px4_ = config.attribute("filename").value_or("").find("SpacecraftThrusterModelPlugin") !=
           std::string::npos;
    link_ = find_link(r, model_, config.get<std::string>("link_name"), config, "link_name");
    const Element* a = config.child("actuator_number");
    if (!a) throw Error(where_, "SpacecraftThrusterModel needs <actuator_number>");
    actuator_ = a->value<int>();
    if (actuator_ < 0) {
      throw Error(a->where(), fmt::format("<actuator_number> must be >= 0, found {}", actuator_));
    }
    max_thrust_ = get_finite(config, "max_thrust");
    frequency_ = get_positive(config, "duty_cycle_frequency");
    if (px4_) max_duty_cycle_ = get_positive(config, "max_duty_cycle");
    std::string ns;
    if (const Element* t = config.child("topic")) {
      ns = t->value<std::string>();
    } else {
      ns = model_name(r, model_);
      spdlog::warn("{}: SpacecraftThrusterModel: no <topic>, using the model's name '{}'", where_,
                   ns);
    }
    std::string topic = ns;
    if (const Element* s = config.child("sub_topic")) topic += "/" + s->value<std::string>();
    if (topic.empty() || topic.front() != '/') topic = "/" + topic;
    topic_ = as_valid_topic(topic);
    reject_unknown_parameters(config, "SpacecraftThrusterModel",
                              px4_ ? "link_name, actuator_number, max_thrust, "
                                     "duty_cycle_frequency, max_duty_cycle, topic, sub_topic"
                                   : "link_name, actuator_number, max_thrust, "
                                     "duty_cycle_frequency, topic, sub_topic");
    entry_ = add_actuators_input(r, model_, topic_);
    if (!r.has<c::ExternalWorldWrenchCmd>(link_)) r.add<c::ExternalWorldWrenchCmd>(link_);
    if (const auto* in = r.try_get<c::Inertial>(link_)) com_L_ = in->value.Pose().Pos();
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    const auto& in = r.get<c::TopicInputs>(model_).actuators[entry_];
    if (in.count != seen_) {
      seen_ = in.count;
      const auto& values = px4_ ? in.velocity : in.normalized;
      has_command_ = static_cast<std::size_t>(actuator_) < values.size();
      if (has_command_ && !std::isfinite(values[actuator_])) {
        has_command_ = false;
        spdlog::error(
            "{}: SpacecraftThrusterModel of '{}': a command on {} for actuator {} is {}, not a "
            "finite number; the thruster is off until a finite one arrives",
            where_, r.scoped_name(model_), topic_, actuator_, values[actuator_]);
      } else if (has_command_) {
        command_ = px4_ ? values[actuator_] / max_duty_cycle_ : values[actuator_];
      } else {
        spdlog::error(
            "{}: SpacecraftThrusterModel of '{}': a command on {} has {} {} values, too few for "
            "actuator {}; the thruster is off until a longer one arrives",
            where_, r.scoped_name(model_), topic_, values.size(), px4_ ? "velocity" : "normalized",
            actuator_);
      }
    }
    if (info.paused) return;
    if (!has_command_) return;
    // Gazebo's simTime: the end of the step being run, in seconds.
    const double now = std::chrono::duration<double>(info.sim_time + info.dt).count();
    const double period = 1.0 / frequency_;
    const double target = command_ * period;
    if (sampling_time_ >= period) cycle_start_ = now;
    sampling_time_ = now - cycle_start_;
    double force = sampling_time_ <= target ? max_thrust_ : 0.0;
    if (target < 1e-9) force = 0.0;
    if (force == 0.0) return;
    const auto* X_WL = r.try_get<c::WorldPose>(link_);
    if (!X_WL) return;
    const auto& q = X_WL->value.Rot();
    add_wrench_at(r, link_, q.RotateVector(Vector3d(0, 0, force)), Vector3d::Zero,
                  q.RotateVector(com_L_));
  }

  // Gazebo reloads a system without Reset from its SDF: the cycle starts again and the last
  // command is forgotten (its new subscription has received nothing).
  void reset(const UpdateInfo&, ecs::Registry& r) override {
    sampling_time_ = kInitialSamplingTime;
    cycle_start_ = 0;
    has_command_ = false;
    command_ = 0;
    seen_ = r.get<c::TopicInputs>(model_).actuators[entry_].count;
  }

 private:
  ecs::Entity model_ = ecs::kNullEntity, link_ = ecs::kNullEntity;
  std::string where_, topic_;
  bool px4_ = false;
  int actuator_ = 0;
  double max_thrust_ = 0, frequency_ = 0, max_duty_cycle_ = 0;
  Vector3d com_L_;
  std::size_t entry_ = 0;
  std::uint64_t seen_ = 0;
  bool has_command_ = false;
  double command_ = 0;
  double sampling_time_ = kInitialSamplingTime, cycle_start_ = 0;
};

}  // namespace

std::unique_ptr<System> make_spacecraft_thruster_model() {
  return std::make_unique<SpacecraftThrusterModel>();
}

}  // namespace kestrel::systems
