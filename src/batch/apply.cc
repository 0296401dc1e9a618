// Drawn values into the registry of a loaded, not yet configured, world.
#include "kestrel/batch/apply.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numbers>
#include <string_view>
#include <vector>

#include "kestrel/components/model.h"
#include "kestrel/components/world.h"
#include "kestrel/core/text.h"
#include "kestrel/world/builtin.h"
#include "sensors/noise/noise.h"

namespace kestrel::batch {
namespace {

namespace c = kestrel::components;
using ignition::math::Vector3d;

Vector3d& wind_of(ecs::Registry& r, ecs::Entity world) {
  if (!r.has<c::Wind>(world)) r.add<c::Wind>(world, c::Wind{});
  return r.get<c::Wind>(world).linear_velocity;
}

void set_mass(const Value& v, ecs::Registry& r, ecs::Entity world) {
  if (!(v.value > 0))
    throw Error(v.where, fmt::format("{}: mass must be > 0 kg, drew {}", v.key, v.value));
  std::string scoped = r.scoped_name(world);
  std::string path = v.key.substr(5);
  for (std::size_t pos = 0; (pos = path.find('/', pos)) != std::string::npos;) {
    path.replace(pos, 1, "::");
  }
  scoped += "::" + path;
  const ecs::Entity link = r.find_scoped(scoped);
  if (link == ecs::kNullEntity || !r.has<c::Link>(link) || !r.has<c::Inertial>(link)) {
    throw Error(v.where, fmt::format("{}: the world has no link '{}'", v.key, scoped));
  }
  auto& inertial = r.get<c::Inertial>(link).value;
  auto mm = inertial.MassMatrix();
  const double ratio = v.value / mm.Mass();
  mm.SetMass(v.value);
  mm.SetDiagonalMoments(mm.DiagonalMoments() * ratio);
  mm.SetOffDiagonalMoments(mm.OffDiagonalMoments() * ratio);
  inertial.SetMassMatrix(mm);
}

// X_AC from X_AB and X_BC, spelt out (the usual composition of poses), and X_BA from X_AB.
ignition::math::Pose3d compose(const ignition::math::Pose3d& X_AB,
                               const ignition::math::Pose3d& X_BC) {
  return {X_AB.Pos() + X_AB.Rot().RotateVector(X_BC.Pos()), X_AB.Rot() * X_BC.Rot()};
}
ignition::math::Pose3d inverse(const ignition::math::Pose3d& X_AB) {
  const auto q = X_AB.Rot().Inverse();
  return {-q.RotateVector(X_AB.Pos()), q};
}

// The models directly under `parent`, by name (for an error naming what exists).
std::string models_under(const ecs::Registry& r, ecs::Entity parent) {
  std::string names;
  for (const ecs::Entity e : r.children(parent)) {
    if (!r.has<c::Model>(e)) continue;
    const auto* n = r.try_get<c::Name>(e);
    names += (names.empty() ? "" : ", ") + (n ? n->value : std::string("?"));
  }
  return names.empty() ? "none" : names;
}

// The model at `path` ("x3", nested "a/b") below the world, or an Error naming `v`'s line and
// the models where the path ends.
ecs::Entity find_model(std::string_view path, const ecs::Registry& r, ecs::Entity world,
                       const Value& v) {
  std::string scoped = r.scoped_name(world);
  ecs::Entity model = world;
  for (std::size_t start = 0; start <= path.size();) {
    const auto slash = std::min(path.find('/', start), path.size());
    const std::string name(path.substr(start, slash - start));
    const ecs::Entity e = r.child_by_name(model, name);
    if (e == ecs::kNullEntity || !r.has<c::Model>(e)) {
      throw Error(v.where,
                  fmt::format("{}: the world has no model '{}' (models in '{}': {})", v.key,
                              scoped + "::" + name, scoped, models_under(r, model)));
    }
    scoped += "::" + name;
    model = e;
    start = slash + 1;
  }
  return model;
}

// pose/MODEL[/NESTED...]/C values of one model, applied together: the model's world pose
// (X_WM) gets the components given, the rest kept from the world file; the model's Pose
// (relative to its parent) follows, and every entity below it (links, joints, collisions,
// visuals, sensors, frames, nested models) keeps its pose relative to the model, so its
// WorldPose moves with it: physics builds the bodies from the links' WorldPose at configure.
void set_pose(const std::string& path, const std::vector<const Value*>& values, ecs::Registry& r,
              ecs::Entity world) {
  const Value& first = *values.front();
  const ecs::Entity model = find_model(path, r, world, first);
  const ecs::Entity parent = r.parent(model);
  const std::string scoped = r.scoped_name(model);
  auto* wp = r.try_get<c::WorldPose>(model);
  const auto* wp_parent = r.try_get<c::WorldPose>(parent);
  if (!wp || !wp_parent || !r.has<c::Pose>(model)) {
    throw Error(first.where, fmt::format("{}: the model '{}' has no pose", first.key, scoped));
  }
  const ignition::math::Pose3d X_WM_old = wp->value;
  ignition::math::Vector3d pos = X_WM_old.Pos();
  ignition::math::Vector3d rpy = X_WM_old.Rot().Euler();
  for (const Value* v : values) {
    const std::string comp = v->key.substr(v->key.rfind('/') + 1);
    const double deg = v->value * std::numbers::pi / 180;
    if (comp == "x" || comp == "y" || comp == "z") {
      if (!(std::abs(v->value) <= c::kMaxWorldCoordinate)) {
        throw Error(v->where, fmt::format("{}: a world coordinate within +-{:g} m needed, drew {}",
                                          v->key, c::kMaxWorldCoordinate, v->value));
      }
      (comp == "x" ? pos.X() : comp == "y" ? pos.Y() : pos.Z()) = v->value;
    } else if (comp == "roll") {
      rpy.X() = deg;
    } else if (comp == "pitch") {
      rpy.Y() = deg;
    } else {
      KESTREL_DEMAND(comp == "yaw");
      rpy.Z() = deg;
    }
  }
  const ignition::math::Pose3d X_WM(pos, ignition::math::Quaterniond(rpy));
  const ignition::math::Pose3d X_MW_old = inverse(X_WM_old);
  for (const ecs::Entity e : r.descendants(model)) {
    if (auto* d = r.try_get<c::WorldPose>(e)) d->value = compose(X_WM, compose(X_MW_old, d->value));
  }
  wp->value = X_WM;
  r.get<c::Pose>(model).value = compose(inverse(wp_parent->value), X_WM);
}

// ---- plugin/MODEL/PLUGIN[/N]/PARAM ---------------------------------------------------------

std::string escaped(std::string_view text, bool attribute) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// What changes in a copy of an element: the text of `element`, or its attribute `attribute`.
struct Change {
  const Element* element = nullptr;
  std::string attribute;  ///< empty: the element's text
  std::string value;
};

// `e` as XML with each element on the line it has in its file (blank lines where the file had
// other lines or comments), so the element parsed from it reports the file's lines; with
// `change` made.
void write_xml(const Element& e, const Change& change, int& line, std::string& out) {
  for (; line < e.line(); ++line) out += '\n';
  out += '<' + e.name();
  for (const std::string& a : e.attribute_names()) {
    const bool changed = &e == change.element && a == change.attribute;
    out += ' ' + a + "=\"" + escaped(changed ? change.value : *e.attribute(a), true) + '"';
  }
  out += '>';
  const std::string& t = &e == change.element && change.attribute.empty() ? change.value : e.text();
  out += escaped(t, false);
  line += static_cast<int>(std::count(t.begin(), t.end(), '\n'));
  for (const auto& ch : e.children()) write_xml(*ch, change, line, out);
  out += "</" + e.name() + '>';
}

// A new element: `config` with `change` made, every line as in the file.
std::shared_ptr<const Element> changed(const Element& config, const Change& change) {
  std::string xml;
  int line = config.line();
  write_xml(config, change, line, xml);
  return Element::parse(xml, config.file(), config.line());
}

// The text a drawn value is written as: the shortest that reads back as the value ("2" for 2,
// "1.7e-05"), so a system reads an integral value of an integer parameter as that integer and
// refuses a fraction there at configure, as it would the file's.
std::string number_text(double value) { return fmt::format("{}", value); }

bool one_number(const std::string& text) {
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

std::string short_name(const std::string& system) {
  const auto colons = system.rfind("::");
  return colons == std::string::npos ? system : system.substr(colons + 2);
}

// "MulticopterMotorModel x4 (gz::sim::systems::MulticopterMotorModel), ..." for an error.
std::string plugins_of(const std::vector<const sim::SystemEntry*>& entries) {
  std::vector<std::pair<std::string, int>> counted;
  for (const sim::SystemEntry* s : entries) {
    std::string name = short_name(s->name);
    const auto attr = s->config->attribute("name");
    if (attr && *attr != name) name += " (" + *attr + ")";
    const auto it = std::find_if(counted.begin(), counted.end(),
                                 [&](const auto& e) { return e.first == name; });
    if (it == counted.end()) {
      counted.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [name, n] : counted) {
    out += (out.empty() ? "" : ", ") + name + (n > 1 ? fmt::format(" x{}", n) : "");
  }
  return out.empty() ? "none" : out;
}

// Which (system, parameter) a value already set: one parameter is set by one key.
using SetBy = std::map<std::pair<std::size_t, std::string>, const Value*>;

void set_plugin_parameter(const Value& v, const PluginKey& k, sim::Runner& runner, SetBy& set_by) {
  std::string path;
  for (const std::string& n : k.model) path += (path.empty() ? "" : "/") + n;
  const ecs::Registry& r = runner.registry();
  const ecs::Entity model = find_model(path, r, runner.world(), v);
  const std::string scoped = r.scoped_name(model);
  const auto& systems = runner.systems();
  std::vector<const sim::SystemEntry*> of_model;
  std::vector<std::size_t> matches;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const sim::SystemEntry& s = systems[i];
    if (s.entity != model || !s.initial || !s.active) continue;
    of_model.push_back(&s);
    if (short_name(s.name) == k.plugin || s.config->attribute("name") == k.plugin) {
      matches.push_back(i);
    }
  }
  if (matches.empty()) {
    throw Error(v.where, fmt::format("{}: the model '{}' has no plugin '{}' (its plugins: {})",
                                     v.key, scoped, k.plugin, plugins_of(of_model)));
  }
  auto origins = [&] {
    std::string out;
    for (std::size_t j = 0; j < matches.size(); ++j) {
      out += fmt::format("{}{}: {}", j ? ", " : "", j, systems[matches[j]].origin);
    }
    return out;
  };
  std::vector<std::size_t> chosen;
  if (k.index == "*") {
    chosen = matches;
  } else if (k.index.empty()) {
    if (matches.size() > 1) {
      throw Error(v.where, fmt::format("{}: the model '{}' has {} {} plugins ({}): say which, "
                                       "plugin/{}/{}/N/{} with N from 0 to {}, or * for all",
                                       v.key, scoped, matches.size(), k.plugin, origins(), path,
                                       k.plugin, k.param, matches.size() - 1));
    }
    chosen = matches;
  } else {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(k.index.data(), k.index.data() + k.index.size(), n);
    if (ec != std::errc() || end != k.index.data() + k.index.size() || n >= matches.size()) {
      throw Error(v.where, fmt::format("{}: the model '{}' has {} {} plugin{} ({}): N from 0 to "
                                       "{}, found {}",
                                       v.key, scoped, matches.size(), k.plugin,
                                       matches.size() > 1 ? "s" : "", origins(), matches.size() - 1,
                                       k.index));
    }
    chosen = {matches[n]};
  }
  for (const std::size_t i : chosen) {
    const sim::SystemEntry& s = systems[i];
    const Element& config = *s.config;
    const std::string plugin = fmt::format("the {} plugin at {}", k.plugin, s.origin);
    if (k.param == "gz:system_priority" || k.param == "ignition:system_priority") {
      throw Error(v.where, fmt::format("{}: <{}> is read when the system is added, before a "
                                       "run's values: it cannot be varied",
                                       v.key, k.param));
    }
    std::vector<const Element*> found;
    std::vector<std::string> names;
    for (const auto& ch : config.children()) {
      if (ch->name() == k.param) found.push_back(ch.get());
      if (std::find(names.begin(), names.end(), ch->name()) == names.end()) {
        names.push_back(ch->name());
      }
    }
    if (found.empty()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      const std::string meant = closest_match(k.param, names);
      throw Error(v.where,
                  fmt::format("{}: {} has no <{}>{} (its parameters: {})", v.key, plugin, k.param,
                              meant.empty() ? "" : " (did you mean '" + meant + "'?)",
                              list.empty() ? "none" : list));
    }
    if (found.size() > 1) {
      throw Error(v.where, fmt::format("{}: {} has {} <{}> elements: one number is needed", v.key,
                                       plugin, found.size(), k.param));
    }
    const Element& param = *found.front();
    const std::string& old = param.text();
    if (!param.children().empty() || !one_number(old)) {
      throw Error(v.where, fmt::format("{}: <{}> of {} (at {}) holds '{}', not one number: only a "
                                       "parameter that is one number can be varied",
                                       v.key, k.param, plugin, param.where(),
                                       param.children().empty() ? old : "elements"));
    }
    const std::string text = number_text(v.value);
    const auto [it, fresh] = set_by.emplace(std::pair{i, k.param}, &v);
    if (!fresh) {
      throw Error(v.where, fmt::format("{}: sets <{}> of {}, which {} ({}) sets already", v.key,
                                       k.param, plugin, it->second->key, it->second->where));
    }
    runner.set_config(i, changed(config, {&param, "", text}));
  }
}

// fault/N/ATTR: attribute ATTR of the N-th <fault> of the world's FaultInjection plugin.
void set_fault_attribute(const Value& v, sim::Runner& runner) {
  const std::string rest = v.key.substr(6);
  const std::string index = rest.substr(0, rest.find('/'));
  const std::string attr = rest.substr(rest.find('/') + 1);
  const auto& systems = runner.systems();
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const sim::SystemEntry& s = systems[i];
    if (s.entity == runner.world() && s.initial && s.active &&
        short_name(s.name) == "FaultInjection") {
      found.push_back(i);
    }
  }
  if (found.size() != 1) {
    std::string where;
    for (const std::size_t i : found) where += (where.empty() ? "" : ", ") + systems[i].origin;
    throw Error(v.where, found.empty()
                             ? fmt::format("{}: the world declares no FaultInjection plugin "
                                           "(kestrel-fault-injection-system): no fault schedule "
                                           "to vary",
                                           v.key)
                             : fmt::format("{}: the world declares {} FaultInjection plugins ({}): "
                                           "fault/N/ATTR needs one",
                                           v.key, found.size(), where));
  }
  const sim::SystemEntry& s = systems[found.front()];
  std::vector<const Element*> faults;
  for (const auto& ch : s.config->children()) {
    if (ch->name() == "fault") faults.push_back(ch.get());
  }
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), n);
  if (ec != std::errc() || end != index.data() + index.size() || n >= faults.size()) {
    std::string lines;
    for (std::size_t j = 0; j < faults.size(); ++j) {
      lines += fmt::format("{}{}: {}", j ? ", " : "", j, faults[j]->where());
    }
    throw Error(v.where, fmt::format("{}: the FaultInjection plugin at {} schedules {} fault{}{}",
                                     v.key, s.origin, faults.size(), faults.size() == 1 ? "" : "s",
                                     faults.empty() ? "" : " (" + lines + ")"));
  }
  const Element& fault = *faults[n];
  const auto old = fault.attribute(attr);
  if (!old) {
    std::string names;
    for (const auto& a : fault.attribute_names()) names += (names.empty() ? "" : ", ") + a;
    throw Error(v.where, fmt::format("{}: the fault at {} has no attribute '{}' (it has {}): a "
                                     "run changes the schedule's values, it adds none",
                                     v.key, fault.where(), attr, names));
  }
  if (!one_number(*old)) {
    throw Error(v.where, fmt::format("{}: the fault at {} has {}=\"{}\", not one number: only an "
                                     "attribute that is one number can be varied",
                                     v.key, fault.where(), attr, *old));
  }
  const std::string text = number_text(v.value);
  runner.set_config(found.front(), changed(*s.config, {&fault, attr, text}));
}

// The sensors below `e` ("base_link/imu_sensor, ..." relative to it) for an error.
std::string sensors_under(const ecs::Registry& r, ecs::Entity e) {
  const std::string prefix = r.scoped_name(e) + "::";
  std::string names;
  for (const ecs::Entity d : r.descendants(e)) {
    if (!r.has<c::Sensor>(d)) continue;
    std::string name = r.scoped_name(d).substr(prefix.size());
    for (std::size_t pos = 0; (pos = name.find("::", pos)) != std::string::npos;) {
      name.replace(pos, 2, "/");
    }
    names += (names.empty() ? "" : ", ") + name;
  }
  return names.empty() ? "none" : names;
}

// The elements at `path` below `e` ("*": every child), each as its child indices from `e`; where
// nothing matches, `missing` says which name was not found below which element.
void find_elements(const Element& e, std::span<const std::string> path, std::vector<std::size_t>& at,
                   std::vector<std::vector<std::size_t>>& found, std::string& missing) {
  if (path.empty()) {
    found.push_back(at);
    return;
  }
  bool any = false;
  for (std::size_t k = 0; k < e.children().size(); ++k) {
    const Element& ch = *e.children()[k];
    if (path.front() != "*" && ch.name() != path.front()) continue;
    any = true;
    at.push_back(k);
    find_elements(ch, path.subspan(1), at, found, missing);
    at.pop_back();
  }
  if (!any && missing.empty()) {
    std::string children;
    for (const auto& ch : e.children()) children += (children.empty() ? "<" : ", <") + ch->name() + ">";
    missing = fmt::format("<{}> at {} has no {} (its children: {})", e.name(), e.where(),
                          path.front() == "*" ? "children" : "<" + path.front() + ">",
                          children.empty() ? "none" : children + "");
  }
}

const Element& element_at(const Element& e, std::span<const std::size_t> at) {
  return at.empty() ? e : element_at(*e.children()[at.front()], at.subspan(1));
}

// The sensor a sensor/MODEL[/NESTED...]/LINK/SENSOR/PATH key names, and PATH.
struct SensorKey {
  ecs::Entity entity = ecs::kNullEntity;
  std::string scoped;             ///< world::model::link::sensor
  std::vector<std::string> path;  ///< below <sensor>
};

SensorKey find_sensor(const Value& v, ecs::Registry& r, ecs::Entity world) {
  std::vector<std::string> names;
  for (std::size_t start = 7; start <= v.key.size();) {
    const auto slash = std::min(v.key.find('/', start), v.key.size());
    names.push_back(v.key.substr(start, slash - start));
    start = slash + 1;
  }
  SensorKey k;
  k.scoped = r.scoped_name(world);
  ecs::Entity e = world;
  std::size_t i = 0;
  while (i < names.size() && !r.has<c::Sensor>(e)) {
    const ecs::Entity next = r.find_scoped(k.scoped + "::" + names[i]);
    if (next == ecs::kNullEntity) {
      throw Error(v.where, fmt::format("{}: the world has no sensor '{}::{}' (sensors in '{}': {})",
                                       v.key, k.scoped, names[i], k.scoped, sensors_under(r, e)));
    }
    k.scoped += "::" + names[i++];
    e = next;
  }
  k.path.assign(names.begin() + static_cast<std::ptrdiff_t>(i), names.end());
  if (!r.has<c::Sensor>(e) || k.path.size() < 2) {
    throw Error(v.where,
                fmt::format("{}: expected the sensor, then at least two elements below <sensor> "
                            "(its type block and a number in it), found {}: <update_rate>, "
                            "<topic>, <pose>, <always_on> are read as the world loads and cannot "
                            "be varied",
                            v.key, r.has<c::Sensor>(e) ? "'" + k.scoped + "' and " +
                                                             std::to_string(k.path.size()) +
                                                             " element(s)"
                                                       : "no sensor: '" + k.scoped + "'"));
  }
  k.entity = e;
  return k;
}

// sensor/MODEL[/NESTED...]/LINK/SENSOR/PATH: the text of every element at PATH below the
// sensor's <sensor> (a noise's <stddev>, a lidar's <range><max>, ...). The sensor's component
// gets a new element with the file's lines, which its system reads at configure.
void set_sensor_element(const Value& v, ecs::Registry& r, ecs::Entity world,
                        std::map<std::string, const Value*>& set_by) {
  const SensorKey k = find_sensor(v, r, world);
  const std::string& scoped = k.scoped;
  const std::span<const std::string> path(k.path);
  auto& sensor = r.get<c::Sensor>(k.entity);
  if (!sensor.element) {
    throw Error(v.where, fmt::format("{}: the sensor '{}' was not made from a <sensor> element: "
                                     "nothing to vary",
                                     v.key, scoped));
  }
  std::vector<std::size_t> at;
  std::vector<std::vector<std::size_t>> found;
  std::string missing;
  find_elements(*sensor.element, path, at, found, missing);
  if (found.empty()) {
    throw Error(v.where, fmt::format("{}: the sensor '{}': {}; only elements the world file "
                                     "declares can be varied (declare it there, e.g. "
                                     "<noise type=\"gaussian\"><stddev>0</stddev></noise>)",
                                     v.key, scoped, missing));
  }
  if (!missing.empty()) {
    throw Error(v.where, fmt::format("{}: the sensor '{}': {}, while other elements the path "
                                     "names have it: the path must reach a number everywhere it "
                                     "goes (declare it there, or name the elements instead of *)",
                                     v.key, scoped, missing));
  }
  std::shared_ptr<const Element> element = sensor.element;
  const std::string text = number_text(v.value);
  for (const auto& leaf : found) {
    const Element& old = element_at(*element, leaf);
    if (!old.children().empty() || !one_number(old.text())) {
      throw Error(v.where, fmt::format("{}: <{}> at {} holds {}, not one number", v.key,
                                       old.name(), old.where(),
                                       old.children().empty() ? "'" + old.text() + "'"
                                                              : "elements"));
    }
    std::string id = scoped;
    for (const std::size_t n : leaf) id += "/" + std::to_string(n);
    if (const auto [it, fresh] = set_by.emplace(id, &v); !fresh) {
      throw Error(v.where, fmt::format("{}: sets <{}> at {}, which {} ({}) sets already", v.key,
                                       old.name(), old.where(), it->second->key,
                                       it->second->where));
    }
    element = changed(*element, {&old, "", text});
  }
  // A drawn value the sensor's noise refuses (a stddev below 0, ...) is an error at the plan's
  // line, from the noise's own parser (sensors/noise), not only when the run configures.
  for (const auto& leaf : found) {
    if (leaf.size() < 2) continue;
    const Element& parent = element_at(*element, std::span(leaf).first(leaf.size() - 1));
    if (parent.name() != "noise") continue;
    try {
      sensors::parse_noise(&parent);
    } catch (const Error& e) {
      throw Error(v.where, fmt::format("{}: drew {}: {}", v.key, v.value, e.what()));
    }
  }
  sensor.element = std::move(element);
}

}  // namespace

void apply_values(std::span<const Value> values, ecs::Registry& r, ecs::Entity world) {
  // Speed and direction are applied together (in either order in the plan).
  const Value* speed = nullptr;
  const Value* direction = nullptr;
  // A model's pose components together (in plan order within the model), models in name order.
  std::map<std::string, std::vector<const Value*>> poses;
  std::map<std::string, const Value*> sensor_set_by;  // which key set an element of a sensor
  for (const Value& v : values) {
    if (v.key == "wind_speed") {
      if (!(v.value >= 0)) {
        throw Error(v.where, fmt::format("wind_speed must be >= 0 m/s, drew {}", v.value));
      }
      speed = &v;
    } else if (v.key == "wind_direction") {
      direction = &v;
    } else if (v.key.starts_with("mass/")) {
      set_mass(v, r, world);
    } else if (v.key.starts_with("pose/")) {
      poses[v.key.substr(5, v.key.rfind('/') - 5)].push_back(&v);
    } else if (v.key.starts_with("sensor/")) {
      check_key(v.key, v.where);
      set_sensor_element(v, r, world, sensor_set_by);
    } else if (v.key.starts_with("plugin/") || v.key.starts_with("fault/")) {
      // A plugin's parameter is in the runner's systems: apply_values(values, runner).
      check_key(v.key, v.where);
      KESTREL_DEMAND(false);
    } else {
      check_key(v.key, v.where);
      KESTREL_DEMAND(false);
    }
  }
  for (const auto& [path, of_model] : poses) set_pose(path, of_model, r, world);
  if (!speed && !direction) return;
  Vector3d& w = wind_of(r, world);
  const double h = speed ? speed->value : std::hypot(w.X(), w.Y());
  double ex = 0, ey = -1;  // without a direction given or kept: from the north
  if (direction) {
    // Blowing towards direction + 180 deg: east component -sin, north component -cos.
    const double from = direction->value * std::numbers::pi / 180;
    ex = -std::sin(from);
    ey = -std::cos(from);
  } else if (const double h0 = std::hypot(w.X(), w.Y()); h0 > 0) {
    ex = w.X() / h0;
    ey = w.Y() / h0;
  }
  w.Set(ex * h, ey * h, w.Z());
}

std::span<const std::string_view> wind_readers() {
  // Every system that reads components::Wind, directly or through systems::air_velocity().
  static constexpr std::string_view kReaders[] = {
      "WindEffects",      "MulticopterMotorModel", "AirSpeed",
      "Px4Bridge",        "Px4AirSpeed",           "LiftDrag",
      "AdvancedLiftDrag", "GenericMotorModel",     "ParachuteSystem",
      "FixedWingControl", "FixedWingMission",
  };
  return kReaders;
}

void apply_values(std::span<const Value> values, sim::Runner& runner) {
  std::vector<Value> in_registry;
  SetBy set_by;
  for (const Value& v : values) {
    if (v.key.starts_with("fault/")) {
      check_key(v.key, v.where);
      set_fault_attribute(v, runner);
      continue;
    }
    if (!v.key.starts_with("plugin/")) {
      in_registry.push_back(v);
      continue;
    }
    const auto k = parse_plugin_key(v.key);
    if (!k) check_key(v.key, v.where);  // throws, naming the forms
    set_plugin_parameter(v, *k, runner, set_by);
  }
  const auto wind = std::find_if(values.begin(), values.end(), [](const Value& v) {
    return v.key == "wind_speed" || v.key == "wind_direction";
  });
  if (wind != values.end()) {
    const auto& systems = runner.systems();
    const bool read = std::any_of(systems.begin(), systems.end(), [](const sim::SystemEntry& s) {
      if (!s.active || !s.name.starts_with("kestrel::systems::")) return false;
      const std::string_view name = std::string_view(s.name).substr(18);
      const auto readers = wind_readers();
      return std::find(readers.begin(), readers.end(), name) != readers.end();
    });
    if (!read) {
      std::string names;
      for (const std::string_view n : wind_readers())
        names += (names.empty() ? "" : ", ") + std::string(n);
      throw Error(wind->where,
                  fmt::format("{}: the world has no system that reads its wind (one of {}): every "
                              "run would fly in the same air",
                              wind->key, names));
    }
  }
  // A sensor's values reach it only through the system that serves its type.
  for (const Value& v : values) {
    if (!v.key.starts_with("sensor/")) continue;
    const SensorKey k = find_sensor(v, runner.registry(), runner.world());
    const std::string& type = runner.registry().get<c::Sensor>(k.entity).type;
    std::string_view server;  // the built-in system serving `type`
    for (const auto& b : world::builtin_systems()) {
      for (std::string_view list = b.serves_sensors; !list.empty() && server.empty();) {
        const auto sp = std::min(list.find(' '), list.size());
        if (list.substr(0, sp) == type) server = b.name;
        list = list.substr(std::min(sp + 1, list.size()));
      }
    }
    const auto& systems = runner.systems();
    const std::string name = "kestrel::systems::" + std::string(server);
    const bool served =
        !server.empty() && std::any_of(systems.begin(), systems.end(),
                                       [&](const sim::SystemEntry& s) {
                                         return s.active && s.name == name;
                                       });
    if (!served) {
      const std::string fix = server.empty()
                                  ? std::string(" (Kestrel has none for its type)")
                                  : fmt::format(" (declare gz::sim::systems::{})", server);
      throw Error(v.where, fmt::format("{}: the sensor '{}' ({}) is served by no system of the "
                                       "world{}: every run would read nothing from it",
                                       v.key, k.scoped, type, fix));
    }
  }
  apply_values(in_registry, runner.registry(), runner.world());
}

}  // namespace kestrel::batch
