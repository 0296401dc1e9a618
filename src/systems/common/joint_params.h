#pragma once
// What the joint systems (JointPositionController, JointController, ApplyJointForce,
// JointStatePublisher, KineticEnergyMonitor, TouchPlugin) share: Gazebo's topic names, the
// joints' axes and the command topics they read (TopicInputs, components/messages.h).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/element.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::systems {

/// A topic as Gazebo's TopicUtils::AsValidTopic makes it from names: spaces become '_'.
/// Transport refuses what is still not a valid topic when it subscribes, naming it.
std::string as_valid_topic(std::string topic);

/// Number of axes (coordinates in JointPosition) of the joint: 1 revolute, continuous,
/// prismatic; 2 universal, revolute2; 4 ball (quaternion); 0 fixed and others.
std::size_t joint_axes(const ecs::Registry& r, ecs::Entity joint);

/// The joint's command vector Cmd (JointForceCmd, JointVelocityCmd), added with `axes` zeros
/// when absent (as Gazebo creates the component).
template <class Cmd>
std::vector<double>& joint_command(ecs::Registry& r, ecs::Entity joint, std::size_t axes) {
  auto* cmd = r.try_get<Cmd>(joint);
  if (!cmd) cmd = &r.add<Cmd>(joint, std::vector<double>(axes, 0.0));
  return cmd->data;
}

/// The model's own name (components::Name), as Gazebo's Model::Name.
std::string model_name(const ecs::Registry& r, ecs::Entity model);

/// A command a joint system reads from a topic: ignition.msgs.Double `data`, or with
/// `actuator` >= 0 ignition.msgs.Actuators `position[actuator]` (`position`) or
/// `velocity[actuator]`. Kept by the system; the entry lives in the model's TopicInputs.
struct CommandInput {
  std::string topic;
  std::size_t entry = 0;
  int actuator = -1;
  bool position = false;
  std::uint64_t seen = 0;  ///< the entry's count when last read
};

/// Adds the TopicInputs entry of `in` on `model` (Double or Actuators by in.actuator).
void add_command_input(ecs::Registry& r, ecs::Entity model, CommandInput& in);

/// If a message arrived since the last call, writes its command into `value` (an Actuators
/// message too short for the index is logged as Gazebo does and leaves `value` unchanged).
void read_command(const ecs::Registry& r, ecs::Entity model, CommandInput& in, double& value);

/// What JointController and JointPositionController read about the joints they command and
/// the topic they listen on (gz-sim's rules; src/systems/joint_controller/README.md).
struct JointCommandConfig {
  std::vector<ecs::Entity> joints;  ///< every <joint_name>, in order (at least one)
  std::vector<std::string> names;
  std::string topic;
  int actuator = -1;  ///< <actuator_number> with <use_actuator_msg>true; -1: Double messages
};

/// Reads <joint_name> (one or more), <topic>, <sub_topic>, <use_actuator_msg>,
/// <actuator_number> and PX4's <control_type> and <err_max> (which Gazebo ignores: a warning). The
/// default topic is "/model/M/joint/<first joint>/" + `default_suffix`, "/actuators" with
/// use_actuator_msg; <sub_topic> gives "/model/M/<sub_topic>"; <topic> wins over both.
/// @throws Error at the element's FILE:LINE on a missing or empty joint name, a joint that is
/// not one of the model's, or use_actuator_msg without actuator_number.
JointCommandConfig read_joint_command(const ecs::Registry& r, ecs::Entity model,
                                      const Element& config, std::string_view system,
                                      std::string_view default_suffix);

}  // namespace kestrel::systems
