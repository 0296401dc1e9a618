#include "common/joint_params.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/drive.h"
#include "common/plugin_params.h"
#include "kestrel/components/messages.h"
#include "kestrel/components/model.h"

namespace kestrel::systems {

namespace c = kestrel::components;

std::string as_valid_topic(std::string topic) {
  std::replace(topic.begin(), topic.end(), ' ', '_');
  return topic;
}

void add_command_input(ecs::Registry& r, ecs::Entity model, CommandInput& in) {
  in.entry = in.actuator < 0 ? add_double_input(r, model, in.topic)
                             : add_actuators_input(r, model, in.topic);
}

void read_command(const ecs::Registry& r, ecs::Entity model, CommandInput& in, double& value) {
  const auto& inputs = r.get<c::TopicInputs>(model);
  if (in.actuator < 0) {
    const auto& d = inputs.real[in.entry];
    if (d.count == in.seen) return;
    in.seen = d.count;
    value = d.value;
    return;
  }
  const auto& a = inputs.actuators[in.entry];
  if (a.count == in.seen) return;
  in.seen = a.count;
  const auto& v = in.position ? a.position : a.velocity;
  if (static_cast<std::size_t>(in.actuator) >= v.size()) {
    spdlog::error(
        "{}: actuator_number {} is outside the {} array of size {} ({}); the command "
        "is unchanged (as Gazebo)",
        in.topic, in.actuator, in.position ? "position" : "velocity", v.size(), r.describe(model));
    return;
  }
  value = v[in.actuator];
}

std::size_t joint_axes(const ecs::Registry& r, ecs::Entity joint) {
  switch (r.get<c::JointData>(joint).type) {
    case c::JointType::kRevolute:
    case c::JointType::kContinuous:
    case c::JointType::kPrismatic:
      return 1;
    case c::JointType::kUniversal:
    case c::JointType::kRevolute2:
      return 2;
    case c::JointType::kBall:
      return 4;
    default:
      return 0;
  }
}

std::string model_name(const ecs::Registry& r, ecs::Entity model) {
  const auto* n = r.try_get<c::Name>(model);
  return n ? n->value : std::string{};
}

}  // namespace kestrel::systems

namespace kestrel::systems {

JointCommandConfig read_joint_command(const ecs::Registry& r, ecs::Entity model,
                                      const Element& config, std::string_view system,
                                      std::string_view default_suffix) {
  JointCommandConfig out;
  for (const Element* e : config.children("joint_name")) {
    const auto name = e->value<std::string>();
    if (name.empty()) throw Error(e->where(), fmt::format("{}: <joint_name> is empty", system));
    out.joints.push_back(find_joint(r, model, name, *e, "joint_name"));
    out.names.push_back(name);
  }
  if (out.joints.empty()) {
    throw Error(config.where(), fmt::format("{}: <joint_name> is required", system));
  }
  const std::string model_name_ = model_name(r, model);
  if (config.get_or("use_actuator_msg", false)) {
    if (!config.has("actuator_number")) {
      throw Error(config.child("use_actuator_msg")->where(),
                  fmt::format("{}: <use_actuator_msg> needs <actuator_number> (the index into "
                              "the Actuators message)",
                              system));
    }
    out.actuator = config.get<int>("actuator_number");
    if (out.actuator < 0) {
      throw Error(config.child("actuator_number")->where(),
                  fmt::format("{}: <actuator_number> must be >= 0", system));
    }
    out.topic = "/actuators";
  } else {
    config.child("actuator_number");  // read: Gazebo ignores it without use_actuator_msg
    out.topic = fmt::format("/model/{}/joint/{}/{}", model_name_, out.names[0], default_suffix);
  }
  if (config.has("sub_topic")) {
    out.topic = fmt::format("/model/{}/{}", model_name_, config.get<std::string>("sub_topic"));
  }
  if (config.has("topic")) out.topic = config.get<std::string>("topic");
  out.topic = as_valid_topic(out.topic);
  // PX4's models give <control_type> (rovers) and <err_max> (tiltrotor), which Gazebo ignores.
  for (const char* px4 : {"control_type", "err_max"}) {
    if (const Element* e = config.child(px4)) {
      spdlog::warn(
          "{}: {}: <{}> is not a parameter of Gazebo's {} (Gazebo ignores it, so does Kestrel)",
          e->where(), system, px4, system);
    }
  }
  return out;
}

}  // namespace kestrel::systems
