// JointPositionController: a PID on one joint axis's position error, commanding a joint force
// (or, with use_velocity_commands, the velocity that reaches the target in one step), as
// gz-sim's (Fortress) JointPositionController computes it. See README.md.
#include "joint_position_controller/joint_position_controller.h"

#include <fmt/format.h>

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

constexpr const char* kKnown =
    "joint_name, joint_index, p_gain, i_gain, d_gain, i_max, i_min, cmd_max, cmd_min, cmd_offset, "
    "use_velocity_commands, initial_position, topic, sub_topic, use_actuator_msg, actuator_number";

class JointPositionController final : public System,
                                      public ISystemConfigure,
                                      public ISystemPreUpdate,
                                      public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "JointPositionController");
    cfg_ = read_joint_command(r, entity, config, "JointPositionController",
                              fmt::format("{}/cmd_pos", config.get_or<unsigned>("joint_index", 0)));
    index_ = config.get_or<unsigned>("joint_index", 0);
    for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
      const std::size_t axes = joint_axes(r, cfg_.joints[k]);
      const bool ball = r.get<c::JointData>(cfg_.joints[k]).type == c::JointType::kBall;
      if (index_ >= axes || ball) {
        const Element* e = config.child("joint_index");
        throw Error(e ? e->where() : config.where(),
                    fmt::format("JointPositionController: <joint_index> {} but joint '{}' has {} "
                                "axis(es) it can control",
                                index_, cfg_.names[k], ball ? 0 : axes));
      }
      axes_.push_back(axes);
    }
    const double p = config.get_or("p_gain", 1.0), i = config.get_or("i_gain", 0.1),
                 d = config.get_or("d_gain", 0.01), i_max = config.get_or("i_max", 1.0),
                 i_min = config.get_or("i_min", -1.0), cmd_max = config.get_or("cmd_max", 1000.0),
                 cmd_min = config.get_or("cmd_min", -1000.0),
                 cmd_offset = config.get_or("cmd_offset", 0.0);
    for (double v : {p, i, d, i_max, i_min, cmd_max, cmd_min, cmd_offset}) {
      if (!std::isfinite(v)) {
        throw Error(config.where(),
                    "JointPositionController: gains and limits must be finite numbers");
      }
    }
    max_set_ = config.has("cmd_max");
    velocity_mode_ = config.get_or("use_velocity_commands", false);
    pid_.Init(p, i, d, i_max, i_min, cmd_max, cmd_min, cmd_offset);
    initial_pid_ = pid_;
    initial_position_ = config.get_or("initial_position", 0.0);
    if (cfg_.topic.empty()) {
      throw Error(config.where(), "JointPositionController: the command topic is empty");
    }
    in_.topic = cfg_.topic;
    in_.actuator = cfg_.actuator;
    in_.position = true;
    add_command_input(r, model_, in_);
    target_ = initial_position_;
    reject_unknown_parameters(config, "JointPositionController", kKnown);
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    read_command(r, model_, in_, target_);  // Gazebo's subscriber callback
    // Gazebo's joint state is empty until Physics filled it at the end of the first step.
    if (info.paused || info.iterations == 0) return;
    const auto* q = r.try_get<c::JointPosition>(cfg_.joints[0]);
    if (!q || q->data.size() <= index_) return;
    const double error = q->data[index_] - target_;
    if (velocity_mode_) {
      // The velocity that closes the error in one step, limited to cmd_max when it is given.
      const double dt = to_seconds(info.dt);
      double velocity = -error / dt;
      if (max_set_ && std::abs(error) > pid_.CmdMax() * dt) {
        velocity = error < 0 ? pid_.CmdMax() : -pid_.CmdMax();
      }
      for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
        command<c::JointVelocityCmd>(r, k)[index_] = velocity;
      }
      return;
    }
    // Gazebo updates the PID once per commanded joint (the same error each time).
    for (std::size_t k = 0; k < cfg_.joints.size(); ++k) {
      command<c::JointForceCmd>(r, k)[index_] = pid_.Update(error, info.dt);
    }
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    pid_ = initial_pid_;
    target_ = initial_position_;
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
  unsigned index_ = 0;
  bool max_set_ = false, velocity_mode_ = false;
  double initial_position_ = 0, target_ = 0;
  ignition::math::PID pid_, initial_pid_;
};

}  // namespace

std::unique_ptr<System> make_joint_position_controller() {
  return std::make_unique<JointPositionController>();
}

}  // namespace kestrel::systems
