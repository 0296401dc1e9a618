#include "common/plugin_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "kestrel/components/model.h"

namespace kestrel::systems {

namespace c = kestrel::components;

void reject_unknown_parameters(const Element& config, std::string_view system,
                               std::string_view known,
                               std::initializer_list<std::string_view> own_attributes) {
  for (const Element* e : config.unread_children()) {
    if (e->name().find(':') != std::string::npos) continue;  // gz:system_priority, kestrel:...
    throw Error(e->where(),
                fmt::format("{}: unknown parameter <{}> (accepted: {})", system, e->name(), known));
  }
  for (const auto& e : config.children()) {
    if (e->name().find(':') != std::string::npos) continue;
    if (std::find(own_attributes.begin(), own_attributes.end(), e->name()) !=
        own_attributes.end()) {
      continue;
    }
    if (const auto names = e->attribute_names(); !names.empty()) {
      throw Error(e->where(), fmt::format("{}: <{}> has unknown attribute '{}' (accepted: none; "
                                          "parameters take no attributes)",
                                          system, e->name(), names.front()));
    }
  }
}

double get_positive(const Element& config, std::string_view name, bool allow_zero) {
  const double v = config.get<double>(name);
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0)) {
    throw Error(config.child(name)->where(),
                fmt::format("<{}> must be a finite number {} 0, found {}", name,
                            allow_zero ? ">=" : ">", v));
  }
  return v;
}

double get_positive_or(const Element& config, std::string_view name, double fallback,
                       bool allow_zero) {
  return config.has(name) ? get_positive(config, name, allow_zero) : fallback;
}

double get_finite_or(const Element& config, std::string_view name, double fallback) {
  const Element* e = config.child(name);
  if (!e) return fallback;
  const double v = e->value<double>();
  if (!std::isfinite(v)) {
    throw Error(e->where(),
                fmt::format("<{}> must be a finite number, found '{}'", name, e->text()));
  }
  return v;
}

double get_finite(const Element& config, std::string_view name) {
  if (!config.child(name)) {
    throw Error(config.where(),
                fmt::format("<{}> is missing required parameter <{}>", config.name(), name));
  }
  return get_finite_or(config, name, 0.0);
}

ignition::math::Vector3d get_finite_vector_or(const Element& config, std::string_view name,
                                              const ignition::math::Vector3d& fallback) {
  const Element* e = config.child(name);
  if (!e) return fallback;
  const auto v = e->value<ignition::math::Vector3d>();
  if (!std::isfinite(v.X()) || !std::isfinite(v.Y()) || !std::isfinite(v.Z())) {
    throw Error(e->where(),
                fmt::format("<{}> must be three finite numbers, found '{}'", name, e->text()));
  }
  return v;
}

ignition::math::Vector3d get_nonnegative_vector_or(const Element& config, std::string_view name,
                                                   const ignition::math::Vector3d& fallback) {
  if (!config.has(name)) return fallback;
  const auto v = config.get<ignition::math::Vector3d>(name);
  for (double x : {v.X(), v.Y(), v.Z()}) {
    if (!std::isfinite(x) || x < 0) {
      throw Error(config.child(name)->where(),
                  fmt::format("<{}> must be three finite numbers >= 0, found '{}'", name,
                              config.child(name)->text()));
    }
  }
  return v;
}

std::string resolve_topic(std::string_view ns, std::string_view topic) {
  std::string joined;
  if (!topic.empty() && topic.front() == '/') {
    joined = std::string(topic);
  } else {
    joined = "/" + std::string(ns) + "/" + std::string(topic);
  }
  std::string out;
  for (char ch : joined) {
    if (ch == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(ch);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

namespace {
bool parse_double(std::string_view s, double& out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}
}  // namespace

std::string attribute_string(const Element& e, std::string_view key) {
  auto a = e.attribute(key);
  if (!a) {
    throw Error(e.where(), fmt::format("<{}> is missing required attribute '{}'", e.name(), key));
  }
  return *a;
}

double attribute_double(const Element& e, std::string_view key) {
  const std::string s = attribute_string(e, key);
  double v = 0;
  if (!parse_double(s, v)) {
    throw Error(e.where(), fmt::format("<{}> attribute '{}' must be a finite number, found '{}'",
                                       e.name(), key, s));
  }
  return v;
}

double attribute_double_or(const Element& e, std::string_view key, double fallback) {
  return e.attribute(key) ? attribute_double(e, key) : fallback;
}

ignition::math::Vector3d attribute_vector(const Element& e, std::string_view key) {
  const std::string s = attribute_string(e, key);
  std::istringstream in(s);
  std::string a, b, cc, extra;
  double v[3];
  if (!(in >> a >> b >> cc) || (in >> extra) || !parse_double(a, v[0]) || !parse_double(b, v[1]) ||
      !parse_double(cc, v[2])) {
    throw Error(e.where(), fmt::format("<{}> attribute '{}' must be three numbers 'x y z', "
                                       "found '{}'",
                                       e.name(), key, s));
  }
  return {v[0], v[1], v[2]};
}

ModelPlugins& model_plugins(ecs::Registry& r, ecs::Entity model) {
  if (auto* p = r.try_get<ModelPlugins>(model)) return *p;
  return r.add<ModelPlugins>(model);
}

void claim_unique_plugin(ecs::Registry& r, ecs::Entity model, const std::string& what,
                         const Element& config) {
  auto& unique = model_plugins(r, model).unique;
  for (const auto& [key, where] : unique) {
    if (key == what) {
      throw Error(config.where(),
                  fmt::format("model '{}' declares a second {} (the first is at {}): one model "
                              "takes one; remove one of the two <plugin> elements",
                              r.scoped_name(model), what, where));
    }
  }
  unique.emplace_back(what, config.where());
}

Error actuator_out_of_range(const std::string& motor_where, std::string_view model, int actuator,
                            std::size_t count, std::string_view source) {
  return Error(motor_where,
               fmt::format("MulticopterMotorModel of model '{}': <actuator_number> {} is beyond "
                           "the {} rotor command{} {} (actuator numbers 0..{}): this rotor would "
                           "never spin",
                           model, actuator, count, count == 1 ? "" : "s", source,
                           static_cast<long>(count) - 1));
}

void check_motor_against_controller(const ModelPlugins& plugins, std::string_view model,
                                    std::size_t actuator, const std::string& motor_joint,
                                    const std::string& motor_where) {
  const auto& joints = plugins.commanded_joints;
  if (joints.empty()) return;
  const std::string source = "MulticopterVelocityControl (" + plugins.commander_where +
                             ") sends from its <rotorConfiguration>";
  if (actuator >= joints.size()) {
    throw actuator_out_of_range(motor_where, model, static_cast<int>(actuator), joints.size(),
                                source);
  }
  if (joints[actuator] != motor_joint) {
    throw Error(
        motor_where,
        fmt::format("MulticopterMotorModel of model '{}': <actuator_number> {} drives joint "
                    "'{}', but rotor {} of MulticopterVelocityControl ({}) is joint '{}': "
                    "the controller would command this rotor as if it were there (list "
                    "the <rotor> elements in actuator_number order)",
                    model, actuator, motor_joint, actuator, plugins.commander_where,
                    joints[actuator]));
  }
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {
template <class Marker>
std::string list_children(const ecs::Registry& r, ecs::Entity model) {
  std::string names;
  for (ecs::Entity e : r.children(model)) {
    if (!r.has<Marker>(e)) continue;
    if (auto* n = r.try_get<c::Name>(e)) names += (names.empty() ? "" : ", ") + n->value;
  }
  return names.empty() ? "none" : names;
}
}  // namespace

ecs::Entity find_link(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                      const Element& config, std::string_view parameter) {
  const ecs::Entity e = r.child_by_name(model, name);
  if (e == ecs::kNullEntity || !r.has<c::Link>(e)) {
    const Element* p = config.child(parameter);
    throw Error(p ? p->where() : config.where(),
                fmt::format("<{}> '{}' is not a link of model '{}' (links: {})", parameter, name,
                            r.scoped_name(model), list_children<c::Link>(r, model)));
  }
  return e;
}

ecs::Entity find_joint(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                       const Element& config, std::string_view parameter) {
  std::string_view local = name;
  if (auto* n = r.try_get<c::Name>(model)) {
    for (const std::string sep : {"::", "/"}) {
      const std::string prefix = n->value + sep;
      if (local.starts_with(prefix)) local.remove_prefix(prefix.size());
    }
  }
  const ecs::Entity e = r.child_by_name(model, local);
  if (e == ecs::kNullEntity || !r.has<c::Joint>(e)) {
    const Element* p = config.child(parameter);
    throw Error(p ? p->where() : config.where(),
                fmt::format("<{}> '{}' is not a joint of model '{}' (joints: {})", parameter, name,
                            r.scoped_name(model), list_children<c::Joint>(r, model)));
  }
  return e;
}

}  // namespace kestrel::systems
