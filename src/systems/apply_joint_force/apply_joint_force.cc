// ApplyJointForce: adds the latest force received on its topic to a joint's first axis every
// step, as gz-sim's (Fortress) ApplyJointForce does. See README.md.
#include "apply_joint_force/apply_joint_force.h"

#include <fmt/format.h>

#include "common/drive.h"
#include "common/joint_params.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"
#include "kestrel/components/physics.h"

namespace kestrel::systems {
namespace {

namespace c = kestrel::components;

class ApplyJointForce final : public System,
                              public ISystemConfigure,
                              public ISystemPreUpdate,
                              public ISystemReset {
 public:
  void configure(ecs::Entity entity, const Element& config, ecs::Registry& r,
                 sim::EventBus&) override {
    model_ = require_model(r, entity, config, "ApplyJointForce");
    const auto name = config.get<std::string>("joint_name");
    if (name.empty()) {
      throw Error(config.child("joint_name")->where(), "ApplyJointForce: <joint_name> is empty");
    }
    joint_ = find_joint(r, entity, name, config, "joint_name");
    axes_ = joint_axes(r, joint_);
    if (axes_ == 0 || r.get<c::JointData>(joint_).type == c::JointType::kBall) {
      throw Error(config.child("joint_name")->where(),
                  fmt::format("ApplyJointForce: joint '{}' has no axis to push", name));
    }
    in_.topic =
        as_valid_topic(fmt::format("/model/{}/joint/{}/cmd_force", model_name(r, entity), name));
    add_command_input(r, model_, in_);
    reject_unknown_parameters(config, "ApplyJointForce", "joint_name");
  }

  void pre_update(const UpdateInfo& info, ecs::Registry& r) override {
    read_command(r, model_, in_, force_);  // Gazebo's subscriber callback
    if (info.paused) return;
    const double force = force_;
    // Gazebo creates the command with the force, else adds it.
    joint_command<c::JointForceCmd>(r, joint_, axes_)[0] += force;
  }

  void reset(const UpdateInfo&, ecs::Registry&) override {
    force_ = 0;
    in_.seen = 0;
  }

 private:
  ecs::Entity model_ = ecs::kNullEntity, joint_ = ecs::kNullEntity;
  std::size_t axes_ = 1;
  CommandInput in_;
  double force_ = 0;  // [N or N·m], the latest command
};

}  // namespace

std::unique_ptr<System> make_apply_joint_force() { return std::make_unique<ApplyJointForce>(); }

}  // namespace kestrel::systems
