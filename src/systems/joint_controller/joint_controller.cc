// JointController: commands a joint's velocity directly, or through a PID on the velocity
// error that commands a joint force (use_force_commands), as gz-sim's (Fortress)
// JointController does. See README.md.
#include "joint_controller/joint_controller.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <ignition/math/PID.hh>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

class JointController final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "JointController");
    cfg_ = read_joint_command(r, entity, config, "JointController", "cmd_vel");
    for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
      const std::size_t axes = joint_axes(r, cfg_.joints[k]);
      if (axes == 0 || r.get<c::JointData>(cfg_.joints[k]).type == c::JointType::kBall) {
        throw Error(config.where(), fmt::format("JointController: joint '{}' has no axis to "
                                                "command",
                                                cfg_.names[k]));
      }
      axes_.push_back(axes);
    }
    initial_velocity_ = config.get_or("initial_velocity", 0.0);
    force_mode_ = config.get_or("use_force_commands", false);
    // The PID's parameters are read only with use_force_commands, as in Gazebo; given without
    // it they are ignored, loudly.
    static constexpr const char* kPid[] = {"p_gain",  "i_gain",     "d_gain",
                                           "i_max",   "i_min",      "cmd_max",
                                           "cmd_min", "cmd_offset", "disable_braking"};
    if (force_mode_) {
      const double p = config.get_or("p_gain", 1.0), i = config.get_or("i_gain", 0.0),
                   d = config.get_or("d_gain", 0.0), i_max = config.get_or("i_max", 1.0),
                   i_min = config.get_or("i_min", -1.0), cmd_max = config.get_or("cmd_max", 1000.0),
                   cmd_min = config.get_or("cmd_min", -1000.0),
                   cmd_offset = config.get_or("cmd_offset", 0.0);
      for (double v : {p, i, d, i_max, i_min, cmd_max, cmd_min, cmd_offset}) {
        if (!std::isfinite(v)) {
          throw Error(config.where(), "JointController: gains and limits must be finite numbers");
        }
      }
      pid_.Init(p, i, d, i_max, i_min, cmd_max, cmd_min, cmd_offset);
      disable_braking_ = config.get_or("disable_braking", false);
    } else {
      for (const char* name : kPid) {
        if (const Element* e = config.child(name)) {
          spdlog::warn(
              "{}: JointController: <{}> is ignored without "
              "<use_force_commands>true</use_force_commands> (as in Gazebo)",
              e->where(), name);
        }
      }
    }
    initial_pid_ = pid_;
    if (cfg_.topic.empty()) {
      throw Error(config.where(), "JointController: the command topic is empty");
    }
    in_.topic = cfg_.topic;
    in_.actuator = cfg_.actuator;
    add_command_input(r, model_, in_);
    target_ = initial_velocity_;
    reject_unknown_parameters(config, "JointController",
                              "joint_name, initial_velocity, use_force_commands, topic, "
                              "sub_topic, use_actuator_msg, actuator_number, p_gain, i_gain, "
                              "d_gain, i_max, i_min, cmd_max, cmd_min, cmd_offset, "
                              "disable_braking");
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    read_command(r, model_, in_, target_);  // Gazebo's subscriber callback
    // Gazebo creates the joint's velocity component in its first step and acts from the next.
    if (info.paused || info.iterations == 0) return;
    const auto* v = r.try_get<c::JointVelocity>(cfg_.joints[0]);
    if (!v || v->data.empty()) return;
    const double target = target_;
    if (!force_mode_) {
      for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
        command<c::JointVelocityCmd>(r, k)[0] = target;
      }
      return;
    }
    const double error = v->data[0] - target;
    if (disable_braking_) {
      // Only drive towards the target: no force while decelerating or for a zero target.
      const double sign = target > 0 ? 1.0 : (target < 0 ? -1.0 : 0.0);
      if (sign == 0.0 || sign * error > 0.0) return;
    }
    // Gazebo updates the PID once per commanded joint (the same error each time).
    for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
      command<c::JointForceCmd>(r, k)[0] = pid_.Update(error, info.dt);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    pid_ = initial_pid_;
    target_ = initial_velocity_;
    in_.seen = 0;
  }

 private:
  // Joint k's command vector Cmd.
  template <class Cmd>
  std::vector<double>& command(ecs::Registry& r, std::size_t k) {
    return joint_command<Cmd>(r, cfg_.joints[k], axes_[k]);
  }

  JointCommandConfig cfg_;
  std::vector<std::size_t> axes_;
  ecs::Entity model_ = ecs::kNullEntity;
  CommandInput in_;
  bool force_mode_ = false, disable_braking_ = false;
  double initial_velocity_ = 0, target_ = 0;
  ignition::math::PID pid_, initial_pid_;
};

}  // namespace

std::unique_ptr<System> make_joint_controller() { return std::make_unique<JointController>(); }

}  // namespace kestrel::systems
