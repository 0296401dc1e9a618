#include "kestrel/sitl/sitl.h"

#include <fmt/core.h>

#include <charconv>

#include "kestrel/components/model.h"
#include "kestrel/sim/runner.h"

namespace kestrel::sitl {

AttachSpec parse_attach_spec(const std::string& text, const std::string& flag) {
  AttachSpec s;
  const auto colon = text.rfind(':');
  // "world::model" contains colons too: only a final ":N" of digits is an instance.
  bool has_instance = colon != std::string::npos && colon + 1 < text.size() &&
                      (colon == 0 || text[colon - 1] != ':');
  if (has_instance) {
    const std::string num = text.substr(colon + 1);
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || end != num.data() + num.size() || v > 1000) {
      throw Error(fmt::format("{} {}: '{}' is not an instance number (expected MODEL[:INSTANCE] "
                              "with INSTANCE 0..1000, e.g. x500:1)",
                              flag, text, num));
    }
    s.instance = v;
    s.model = text.substr(0, colon);
  } else {
    s.model = text;
  }
  if (s.model.empty()) {
    throw Error(fmt::format("{} '{}': no model name (expected MODEL[:INSTANCE])", flag, text));
  }
  return s;
}

void attach_bridge(sim::Runner& runner, Autopilot autopilot, const AttachSpec& spec) {
  const bool px4 = autopilot == Autopilot::kPx4;
  const std::string flag = px4 ? "--px4" : "--ardupilot";
  auto& reg = runner.registry();
  ecs::Entity model = ecs::kNullEntity;
  if (spec.model.find("::") != std::string::npos) {
    model = reg.find_scoped(spec.model);
  } else {
    model = reg.child_by_name(runner.world(), spec.model);
  }
  if (model == ecs::kNullEntity || !reg.has<components::Model>(model)) {
    std::string names;
    for (ecs::Entity c : reg.children(runner.world())) {
      if (!reg.has<components::Model>(c)) continue;
      const auto* n = reg.try_get<components::Name>(c);
      names += (names.empty() ? "" : ", ") + (n ? n->value : std::string("?"));
    }
    throw Error(fmt::format("{} {}: the world has no model '{}' (its models: {})", flag,
                            spec.model, spec.model, names.empty() ? "none" : names));
  }
  const std::string name = px4 ? "kestrel::systems::Px4Bridge" : "kestrel::systems::ArduPilotBridge";
  const std::string file = px4 ? "kestrel-px4-bridge-system" : "kestrel-ardupilot-bridge-system";
  auto config = Element::parse(fmt::format("<plugin name='{}' filename='{}'><instance>{}"
                                           "</instance></plugin>",
                                           name, file, spec.instance),
                               flag);
  runner.add_system(px4 ? make_px4_bridge_system() : make_ardupilot_bridge_system(), model,
                    std::move(config), name, fmt::format("{} {}:{}", flag, spec.model, spec.instance));
}

}  // namespace kestrel::sitl
