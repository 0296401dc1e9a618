#include "kestrel/sitl/sitl.h"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "kestrel/components/model.h"
#include "kestrel/sim/runner.h"
#include "sitl/actuator_map.h"

namespace kestrel::sitl {
namespace {

constexpr const char* kPx4Name = "kestrel::systems::Px4Bridge";
constexpr const char* kArduPilotName = "kestrel::systems::ArduPilotBridge";
constexpr const char* kRflySimName = "kestrel::systems::RflySimBridge";
constexpr const char* kMotorName = "kestrel::systems::MulticopterMotorModel";
// Systems that write the model's rotor commands too (the mission through the velocity control).
constexpr const char* kControllers[] = {"kestrel::systems::MulticopterVelocityControl",
                                        "kestrel::systems::MulticopterMission"};

const char* autopilot_name(const std::string& system) {
  return system == kPx4Name ? "PX4" : "ArduPilot";
}

// The port a bridge system listens on, if its <plugin> says so readably.
std::optional<int> port_of(const sim::SystemEntry& s) {
  if (!s.config) return std::nullopt;
  const auto autopilot = s.name == kPx4Name ? Autopilot::kPx4 : Autopilot::kArduPilot;
  try {
    const auto instance = s.config->get_or<unsigned>("instance", 0u);
    return s.config->get_or<int>("port", default_port(autopilot, instance));
  } catch (const Error&) {
    return std::nullopt;  // the bridge's own configure reports it
  }
}

std::string model_names(const ecs::Registry& reg, ecs::Entity world) {
  std::string names;
  for (ecs::Entity c : reg.children(world)) {
    if (!reg.has<components::Model>(c)) continue;
    const auto* n = reg.try_get<components::Name>(c);
    names += (names.empty() ? "" : ", ") + (n ? n->value : std::string("?"));
  }
  return names.empty() ? "none" : names;
}

// The first model at or above `e` that is static, or kNullEntity.
ecs::Entity static_model_of(const ecs::Registry& reg, ecs::Entity e) {
  for (; e != ecs::kNullEntity; e = reg.parent(e)) {
    const auto* s = reg.try_get<components::Static>(e);
    if (s && s->value && reg.has<components::Model>(e)) return e;
  }
  return ecs::kNullEntity;
}

// What the model named by `spec` must be before a bridge is attached to it (see sitl.h).
// `arg` is the argument as attached ("--px4 x3:0"), `system` the bridge's system name.
void check_attachable(const sim::Runner& runner, ecs::Entity model, const std::string& flag,
                      const std::string& arg, const std::string& system, int port) {
  const auto& reg = runner.registry();
  const std::string name = reg.scoped_name(model);
  const char* autopilot = autopilot_name(system);
  if (const ecs::Entity s = static_model_of(reg, model); s != ecs::kNullEntity) {
    throw AttachError(
        fmt::format("{}: model '{}' is static{}: it cannot fly", arg, name,
                    s == model ? "" : " (inside static model '" + reg.scoped_name(s) + "')"));
  }
  std::size_t motors = 0;
  std::string nested;  // a model below with rotors of its own
  for (const auto& s : runner.systems()) {
    if (s.entity == model && s.name == kRflySimName) {
      throw AttachError(fmt::format("{}: model '{}' is already flown by RflySim (from {}): one "
                                    "source of commands per model",
                                    arg, name, s.origin));
    }
    if (s.entity == model && (s.name == kPx4Name || s.name == kArduPilotName)) {
      throw AttachError(
          s.name == system && s.origin.starts_with(flag + " ")
              ? fmt::format("{}: model '{}' is given twice ({} already attaches {} to it)", arg,
                            name, s.origin, autopilot)
              : fmt::format("{}: model '{}' is already flown by {} (from {}): one autopilot "
                            "per model",
                            arg, name, autopilot_name(s.name), s.origin));
    }
    for (const char* c : kControllers) {
      if (s.entity == model && s.name == c) {
        throw AttachError(fmt::format(
            "{}: model '{}' has a {} ({}) that drives its rotors too: {} and the controller "
            "would both command them; remove that <plugin> to fly the model with {}",
            arg, name, s.name.substr(s.name.rfind(':') + 1), s.origin, autopilot, autopilot));
      }
    }
    if (s.name == kMotorName && s.active) {
      if (s.entity == model) ++motors;
      for (ecs::Entity p = reg.parent(s.entity); p != ecs::kNullEntity && nested.empty();
           p = reg.parent(p)) {
        if (p == model) nested = reg.scoped_name(s.entity);
      }
    }
    if (s.name == system && s.entity != model && port_of(s) == port) {
      throw AttachError(fmt::format(
          "{}: {} port {} is already used by the {} bridge of model '{}' (from {}): give each "
          "vehicle its own instance",
          arg, system == kPx4Name ? "TCP" : "UDP", port, autopilot, reg.scoped_name(s.entity),
          s.origin));
    }
  }
  if (motors == 0) {
    throw AttachError(fmt::format(
        "{}: model '{}' has no MulticopterMotorModel <plugin> of its own: the {} bridge's rotor "
        "commands (ActuatorCommands on the model) would drive nothing{}",
        arg, name, autopilot,
        nested.empty() ? ""
                       : fmt::format(" (nested model '{}' has rotors: give its name)", nested)));
  }
}

std::string join(const std::vector<int>& v) {
  std::string out;
  for (int i : v) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

constexpr const char* kServoName = "kestrel::systems::JointPositionController";
// PX4's Gazebo bridge turns a servo output of -1..1 into SIM_GZ_SV_MINA..MAXA, -45..45° unless
// an airframe sets them.
constexpr double kServoFullScale = M_PI / 4;
constexpr double kDefaultMaxRotVelocity = 838.0;  // the motor model's default [rad/s]

// A motor model's actuator_number (or Gazebo's older spelling, which PX4's models use).
int actuator_number_of(const Element& motor) {
  return motor.has("actuator_number") ? motor.get<int>("actuator_number")
                                      : motor.get<int>("motorNumber");
}

// `e` with `children` (XML text) added after its own, parsed at its own FILE:LINE.
std::shared_ptr<const Element> with_children(const Element& e, const std::string& children) {
  std::string xml = e.xml();
  while (!xml.empty() && std::isspace(static_cast<unsigned char>(xml.back()))) xml.pop_back();
  if (xml.ends_with("/>")) {
    xml = xml.substr(0, xml.size() - 2) + ">" + children + "</" + e.name() + ">";
  } else {
    xml.insert(xml.rfind("</"), children);
  }
  return Element::parse(xml, e.file(), e.line());
}

// PX4's Gazebo layout for a PX4 bridge that gives no <channel> or <surface>: what PX4's gz
// airframes do (SIM_GZ_EC_FUNCn = 100 + n drives the model's motor n - 1, SIM_GZ_SV_FUNCn =
// 200 + n its servo_(n-1) topic), with the ESCs first and the servos after them on the 16
// outputs of HIL_ACTUATOR_CONTROLS.
void give_px4_layout(sim::Runner& runner, std::size_t index) {
  const auto& reg = runner.registry();
  const auto& b = runner.systems()[index];
  if (b.config->has("channel") || b.config->has("surface")) return;
  double max_rotor = 0;
  try {
    max_rotor = b.config->get_or<double>("max_rotor_velocity", 0.0);
  } catch (const Error&) {
    return;  // the bridge's configure reports it
  }
  const std::string model = reg.get<components::Name>(b.entity).value;
  const std::string servo_prefix = "/model/" + model + "/servo_";
  std::map<int, double> motors;       // actuator_number → full speed [rad/s]
  std::map<int, std::string> servos;  // k of servo_k → topic
  for (const auto& s : runner.systems()) {
    if (s.entity != b.entity || !s.active) continue;
    try {
      if (s.name == kMotorName) {
        const int a = actuator_number_of(*s.config);
        motors[a] = max_rotor > 0
                        ? max_rotor
                        : s.config->get_or<double>("maxRotVelocity", kDefaultMaxRotVelocity);
      } else if (s.name == kServoName && !s.config->get_or("use_actuator_msg", false)) {
        std::string topic;
        if (s.config->has("sub_topic")) {
          topic = "/model/" + model + "/" + s.config->get<std::string>("sub_topic");
        }
        if (s.config->has("topic")) topic = s.config->get<std::string>("topic");
        if (!topic.starts_with(servo_prefix)) continue;
        const std::string k = topic.substr(servo_prefix.size());
        int v = -1;
        const auto [end, ec] = std::from_chars(k.data(), k.data() + k.size(), v);
        if (ec == std::errc() && end == k.data() + k.size() && v >= 0) servos[v] = topic;
      }
    } catch (const Error&) {
      continue;  // that system's configure reports it
    }
  }
  if (motors.empty() || motors.begin()->first < 0) return;  // refused elsewhere
  const int m = motors.rbegin()->first + 1;
  const int outputs = m + (servos.empty() ? 0 : servos.rbegin()->first + 1);
  const std::string who =
      fmt::format("{}: PX4 bridge of model '{}'", b.origin, reg.scoped_name(b.entity));
  if (outputs > 16) {
    const std::string text = fmt::format(
        "{}: PX4's Gazebo layout of the model (its motors' actuator_number first, then its "
        "servo_k topics) needs {} outputs, but HIL_ACTUATOR_CONTROLS carries 16: give the "
        "bridge a <channel> per motor and a <surface> per servo (src/sitl/README.md)",
        who, outputs);
    if (b.origin.starts_with("--")) throw AttachError(text);
    throw Error(text);
  }
  std::string xml, rotors, functions;
  for (const auto& [a, scale] : motors) {
    xml += fmt::format("<channel><index>{}</index><rotor>{}</rotor><scale>{}</scale></channel>", a,
                       a, scale);
    rotors += fmt::format("{}{}→{} ({} rad/s)", rotors.empty() ? "" : ", ", a, a, scale);
    functions += fmt::format("{}PWM_MAIN_FUNC{} {}", functions.empty() ? "" : ", ", a + 1, 101 + a);
  }
  std::string surfaces;
  for (const auto& [k, topic] : servos) {
    xml += fmt::format("<surface><index>{}</index><topic>{}</topic><scale>{}</scale></surface>",
                       m + k, topic, kServoFullScale);
    surfaces += fmt::format("{}{}→servo_{}", surfaces.empty() ? "" : ", ", m + k, k);
    functions += fmt::format(", PWM_MAIN_FUNC{} {}", m + k + 1, 201 + k);
  }
  spdlog::info(
      "{}: no <channel> or <surface> given, so PX4's Gazebo layout of the model: output→rotor "
      "{}{}{}; PX4 gives it with {}",
      who, rotors, surfaces.empty() ? "" : "; output→servo topic (±45°) ", surfaces, functions);
  runner.set_config(index, with_children(*b.config, xml));
}

}  // namespace

void check_channel_maps(sim::Runner& runner) {
  for (std::size_t i = 0; i < runner.systems().size(); ++i) {
    if (runner.systems()[i].name == kPx4Name) give_px4_layout(runner, i);
  }
  const auto& reg = runner.registry();
  for (const auto& b : runner.systems()) {
    if (b.name != kPx4Name && b.name != kArduPilotName) continue;
    const bool px4 = b.name == kPx4Name;
    const std::string who =
        fmt::format("{} bridge of model '{}'", autopilot_name(b.name), reg.scoped_name(b.entity));
    ChannelMap map;
    try {
      const double max_rotor = b.config->get_or<double>("max_rotor_velocity", 1000.0);
      map = ChannelMap::parse(*b.config, ChannelMap::identity(4, max_rotor), px4 ? 16 : 32,
                              max_rotor, who);
    } catch (const Error&) {
      continue;  // the bridge's configure reports a bad map
    }
    std::vector<int> motors, uncovered;
    for (const auto& m : runner.systems()) {
      if (m.name != kMotorName || m.entity != b.entity || !m.active) continue;
      try {
        motors.push_back(actuator_number_of(*m.config));
      } catch (const Error&) {
        continue;  // the motor model's configure reports it
      }
      bool covered = false;
      for (const auto& c : map.channels) covered = covered || c.rotor == motors.back();
      if (!covered) uncovered.push_back(motors.back());
    }
    if (uncovered.empty()) continue;
    std::string channels;
    for (const auto& c : map.channels) {
      channels += fmt::format("{}{}→{}", channels.empty() ? "" : ", ", c.index, c.rotor);
    }
    const bool from_cli = b.origin.starts_with("--");
    const std::string text = fmt::format(
        "{}: model '{}' has {} motors (actuator_number {}) but the {} bridge's channel map "
        "(output channel→rotor: {}) drives no rotor {}: {} would never be commanded (the motor "
        "model stops the run at the first command). {}",
        b.origin, reg.scoped_name(b.entity), motors.size(), join(motors), autopilot_name(b.name),
        channels, join(uncovered), uncovered.size() == 1 ? "that motor" : "those motors",
        from_cli ? "Declare the bridge in the model's SDF with a <channel> per motor "
                   "(src/sitl/README.md) instead of attaching it from the command line"
                 : "Add a <channel> per motor to the bridge's <plugin> (src/sitl/README.md)");
    if (from_cli) throw AttachError(text);
    throw Error(text);
  }
}

int default_port(Autopilot autopilot, unsigned instance) {
  const int i = static_cast<int>(instance);
  return autopilot == Autopilot::kPx4 ? 4560 + i : 9002 + 10 * i;
}

namespace {

// "MODEL[:N]" with N in [lo, hi] (`absent` without ":N"); `noun` names N in messages.
AttachSpec parse_spec(const std::string& text, const std::string& flag, const char* noun,
                      unsigned lo, unsigned hi, unsigned absent) {
  AttachSpec s;
  const auto colon = text.rfind(':');
  // "world::model" contains colons too: only a final ":N" (one colon) is an instance.
  const bool has_instance = colon != std::string::npos && (colon == 0 || text[colon - 1] != ':') &&
                            (colon + 1 == text.size() || text[colon + 1] != ':');
  const std::string expected =
      fmt::format("expected MODEL[:{}] with {} {}..{}, e.g. x500:{}, or MODEL alone for {}", noun,
                  noun, lo, hi, lo + 1, absent);
  if (has_instance) {
    const std::string num = text.substr(colon + 1);
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (num.empty()) {
      throw AttachError(fmt::format("{} {}: nothing after ':' ({})", flag, text, expected));
    }
    if (ec != std::errc() || end != num.data() + num.size() || v < lo || v > hi) {
      throw AttachError(fmt::format("{} {}: '{}' is not {} number ({})", flag, text, num,
                                    noun == std::string("ID") ? "an ID" : "an instance",
                                    expected));
    }
    s.instance = v;
    s.model = text.substr(0, colon);
  } else {
    s.instance = absent;
    s.model = text;
  }
  if (s.model.empty()) {
    throw AttachError(fmt::format("{} '{}': no model name (expected MODEL[:{}])", flag, text, noun));
  }
  return s;
}

}  // namespace

AttachSpec parse_attach_spec(const std::string& text, const std::string& flag) {
  return parse_spec(text, flag, "INSTANCE", 0, 1000, 0);
}

namespace {

// The model a command-line attachment names (top-level, or scoped "world::model").
ecs::Entity find_model(const sim::Runner& runner, const std::string& flag,
                       const std::string& name) {
  const auto& reg = runner.registry();
  const ecs::Entity model = name.find("::") != std::string::npos
                                ? reg.find_scoped(name)
                                : reg.child_by_name(runner.world(), name);
  if (model == ecs::kNullEntity || !reg.has<components::Model>(model)) {
    throw AttachError(fmt::format("{} {}: the world has no model '{}' (its models: {})", flag,
                                  name, name, model_names(reg, runner.world())));
  }
  return model;
}

}  // namespace

void attach_rflysim(sim::Runner& runner, const std::string& text) {
  const std::string flag = "--rflysim";
  // RflySim numbers vehicles from 1 (port 30100 + 2·(ID − 1)); the bridge's copter_id range.
  const AttachSpec spec = parse_spec(text, flag, "ID", 1, 10000, 1);
  const ecs::Entity model = find_model(runner, flag, spec.model);
  const auto& reg = runner.registry();
  const std::string name = reg.scoped_name(model);
  const std::string arg = fmt::format("{} {}:{}", flag, spec.model, spec.instance);
  if (const ecs::Entity s = static_model_of(reg, model); s != ecs::kNullEntity) {
    throw AttachError(fmt::format("{}: model '{}' is static: it cannot fly", arg, name));
  }
  bool motors = false;
  for (const auto& s : runner.systems()) {
    if (s.name == kMotorName && s.active && s.entity == model) motors = true;
    // One source of commands per model: an autopilot or a mission would write the same
    // TwistCommand / ActuatorCommands, and the last writer would win without a word.
    if (s.entity == model && (s.name == kPx4Name || s.name == kArduPilotName ||
                              s.name == "kestrel::systems::MulticopterMission")) {
      throw AttachError(fmt::format(
          "{}: model '{}' is already commanded by {} (from {}): RflySim's commands and its "
          "would both drive the model; remove one",
          arg, name, s.name.substr(s.name.rfind(':') + 1), s.origin));
    }
    if (s.name != kRflySimName) continue;
    if (s.entity == model) {
      throw AttachError(fmt::format("{}: model '{}' already has an RflySim bridge (from {})", arg,
                                    name, s.origin));
    }
    int id = 1;
    try {
      id = s.config ? s.config->get_or<int>("copter_id", 1) : 1;
    } catch (const Error&) {
      continue;  // that bridge's configure reports it
    }
    if (id == static_cast<int>(spec.instance)) {
      throw AttachError(fmt::format(
          "{}: CopterID {} is already model '{}' (from {}): give each vehicle its own ID", arg,
          id, reg.scoped_name(s.entity), s.origin));
    }
  }
  if (!motors) {
    throw AttachError(fmt::format("{}: model '{}' has no MulticopterMotorModel <plugin> of its "
                                  "own: RflySim's commands would drive nothing",
                                  arg, name));
  }
  auto config = Element::parse(
      fmt::format("<plugin name='{}' filename='kestrel-rflysim-bridge-system'><copter_id>{}"
                  "</copter_id></plugin>",
                  kRflySimName, spec.instance),
      flag);
  runner.add_system(make_rflysim_bridge_system(), model, std::move(config), kRflySimName, arg);
}

void attach_bridge(sim::Runner& runner, Autopilot autopilot, const AttachSpec& spec) {
  const bool px4 = autopilot == Autopilot::kPx4;
  const std::string flag = px4 ? "--px4" : "--ardupilot";
  const std::string arg = fmt::format("{} {}:{}", flag, spec.model, spec.instance);
  const ecs::Entity model = find_model(runner, flag, spec.model);
  const std::string name = px4 ? kPx4Name : kArduPilotName;
  check_attachable(runner, model, flag, arg, name, default_port(autopilot, spec.instance));
  const std::string file = px4 ? "kestrel-px4-bridge-system" : "kestrel-ardupilot-bridge-system";
  auto config = Element::parse(fmt::format("<plugin name='{}' filename='{}'><instance>{}"
                                           "</instance></plugin>",
                                           name, file, spec.instance),
                               flag);
  runner.add_system(px4 ? make_px4_bridge_system() : make_ardupilot_bridge_system(), model,
                    std::move(config), name, arg);
}

}  // namespace kestrel::sitl
