#include "kestrel/sitl/sitl.h"

#include <fmt/core.h>

#include <charconv>
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

}  // namespace

void check_channel_maps(const sim::Runner& runner) {
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
        motors.push_back(m.config->get<int>("actuator_number"));
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
