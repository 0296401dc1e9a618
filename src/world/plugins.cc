// Plugin resolution: a <plugin> to a built-in system (world/builtin.h) or a system library on
// the plugin search path, plus Gazebo's default systems and the checks on what the world asks
// for (sensors no system serves, no physics).
#include <cctype>
#include <ignition/plugin/Loader.hh>
#include <mutex>
#include <set>
#include <string_view>
#include <utility>

#include "kestrel/components/model.h"
#include "kestrel/core/paths.h"
#include "kestrel/system_factory.h"
#include "kestrel/world/setup.h"

namespace kestrel::world {

namespace fs = std::filesystem;

const char* source_name(SystemSource s) {
  switch (s) {
    case SystemSource::kBuiltin:
      return "built-in";
    case SystemSource::kExternal:
      return "external";
    case SystemSource::kDefault:
      return "default";
  }
  return "?";
}

std::vector<fs::path> system_plugin_search_path(const ResolveOptions& options) {
  std::vector<fs::path> out = options.plugin_paths;
  for (auto& p : paths_from_environment({"KESTREL_SYSTEM_PLUGIN_PATH", "GZ_SIM_SYSTEM_PLUGIN_PATH",
                                         "IGN_GAZEBO_SYSTEM_PLUGIN_PATH"})) {
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

std::string normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// PX4's own Gazebo plugins (PX4-Autopilot's) outside Gazebo's
// namespaces, by the exact class names PX4's models declare → the built-in that serves them.
constexpr std::pair<std::string_view, std::string_view> kPx4Plugins[] = {
    {"px4::AirSpeed", "Px4AirSpeed"},
    {"custom::MovingPlatformController", "MovingPlatformController"},
};

// The system class of a plugin name, if its namespace is one that maps to built-ins.
std::string builtin_key_from_name(const std::string& name) {
  for (const auto& [px4, builtin] : kPx4Plugins) {
    if (name == px4) return normalize(builtin);
  }
  for (std::string_view ns :
       {"gz::sim::systems::", "ignition::gazebo::systems::", "kestrel::systems::", "::"}) {
    if (name.starts_with(ns)) return normalize(name.substr(ns.size()));
  }
  return name.find("::") == std::string::npos ? normalize(name) : "";
}

// The system stem of a Gazebo/Kestrel library file name ("libgz-sim7-imu-system.so" → "imu").
std::string builtin_key_from_filename(std::string f) {
  f = fs::path(f).filename().string();
  if (f.starts_with("lib")) f = f.substr(3);
  if (f.ends_with(".so")) f = f.substr(0, f.size() - 3);
  std::string rest;
  for (std::string_view p : {"gz-sim", "ignition-gazebo", "kestrel"}) {
    if (f.starts_with(p)) {
      rest = f.substr(p.size());
      break;
    }
  }
  if (rest.empty()) return "";
  std::size_t i = 0;
  while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
  if (i >= rest.size() || rest[i] != '-') return "";
  rest = rest.substr(i + 1);
  if (!rest.ends_with("-system")) return "";
  return normalize(rest.substr(0, rest.size() - 7));
}

// Which Gazebo system serves a sensor type (for messages).
std::pair<std::string, std::string> gazebo_system_for(const std::string& type) {
  if (type == "imu") return {"Imu", "imu"};
  if (type == "magnetometer") return {"Magnetometer", "magnetometer"};
  if (type == "air_pressure") return {"AirPressure", "air-pressure"};
  if (type == "air_speed") return {"AirSpeed", "air-speed"};
  if (type == "altimeter") return {"Altimeter", "altimeter"};
  if (type == "navsat" || type == "gps") return {"NavSat", "navsat"};
  if (type == "contact") return {"Contact", "contact"};
  if (type == "force_torque") return {"ForceTorque", "forcetorque"};
  if (type == "lidar" || type == "ray" || type == "cpu_lidar") return {"CpuLidar", "cpu-lidar"};
  if (type == "logical_camera") return {"LogicalCamera", "logical-camera"};
  return {"Sensors", "sensors"};
}

// Loaded libraries stay loaded for the life of the process: systems created from them may be
// held by any Runner, and unloading code with live objects crashes.
ignition::plugin::Loader& plugin_loader() {
  static auto* loader = new ignition::plugin::Loader;
  return *loader;
}
std::mutex& loader_mutex() {
  static std::mutex m;
  return m;
}

struct External {
  std::unique_ptr<System> system;
  fs::path library;
  std::string error;  // non-empty: found but unusable
  std::vector<fs::path> searched;
};

External load_external(const PluginDecl& p, const std::vector<fs::path>& dirs) {
  External r;
  std::vector<fs::path> candidates;
  const fs::path f(p.filename);
  if (f.is_absolute()) {
    candidates.push_back(f);
  } else {
    for (const auto& d : dirs) {
      for (const std::string& n :
           {p.filename, "lib" + p.filename + ".so", p.filename + ".so", "lib" + p.filename}) {
        candidates.push_back(d / n);
      }
    }
  }
  std::error_code ec;
  for (const auto& c : candidates) {
    r.searched.push_back(c);
    if (!fs::is_regular_file(c, ec)) continue;
    r.library = c;
    std::lock_guard lock(loader_mutex());
    auto& loader = plugin_loader();
    const auto names = loader.LoadLib(c.string());
    if (names.empty()) {
      r.error = "library " + c.string() + " could not be loaded or registers no plugins";
      return r;
    }
    const auto factories = loader.PluginsImplementing<kestrel::SystemFactory>();
    std::string wanted;
    std::string available;
    for (const auto& n : factories) {
      if (!names.count(n)) continue;
      for (const auto& alias : loader.AliasesOfPlugin(n)) {
        available += (available.empty() ? "" : ", ") + alias;
        if (alias == p.name) wanted = n;
      }
      if (n == p.name) wanted = n;
    }
    if (wanted.empty()) {
      r.error = available.empty()
                    ? "library " + c.string() +
                          " provides no Kestrel system (Gazebo system libraries cannot be "
                          "loaded by Kestrel; write it with KESTREL_ADD_SYSTEM)"
                    : "library " + c.string() + " has no system named '" + p.name +
                          "'; it provides: " + available;
      return r;
    }
    auto plugin = loader.Instantiate(wanted);
    auto* factory = plugin ? plugin->QueryInterface<kestrel::SystemFactory>() : nullptr;
    if (!factory) {
      r.error = "cannot instantiate '" + p.name + "' from " + c.string();
      return r;
    }
    r.system = factory->create();
    return r;
  }
  return r;
}

}  // namespace

namespace {

// Gazebo systems that only serve a GUI or rendering, and that Kestrel does not build in
// (normalized class names).
constexpr std::string_view kRenderOnly[] = {"cameravideorecorder", "logvideorecorder",
                                            "shaderparam"};

// Gazebo systems Kestrel does not build in because what they do has no counterpart here
// (normalized class names), with what to use instead (docs/compatibility.md): they read
// Gazebo's own log format.
constexpr std::pair<std::string_view, std::string_view> kCannotProvide[] = {
    {"logplayback",
     "it plays Gazebo's log (<path>/state.tlog, ign-transport's SQLite log), which Kestrel does "
     "not read: replay a Kestrel recording with `kestrel replay FILE.mcap`"},
};

// Why Kestrel does not provide a Gazebo system, or "" (matched by class name or library file
// name).
std::string_view cannot_provide(const PluginDecl& p) {
  for (const std::string& key :
       {builtin_key_from_name(p.name), builtin_key_from_filename(p.filename)}) {
    for (const auto& [name, why] : kCannotProvide) {
      if (!key.empty() && key == name) return why;
    }
  }
  return {};
}

}  // namespace

bool render_only_system(const PluginDecl& p) {
  for (const std::string& key :
       {builtin_key_from_name(p.name), builtin_key_from_filename(p.filename)}) {
    for (auto r : kRenderOnly) {
      if (!key.empty() && key == r) return true;
    }
  }
  return false;
}

namespace {

// Resolves each declared plugin (built-in, else external library, else a finding). Records the
// built-ins used, the unresolved Gazebo system names (for the sensor check) and the plugins
// left out.
void resolve_plugins(std::span<const PluginDecl> plugins, const ecs::Registry& registry,
                     const ResolveOptions& options, Findings& findings,
                     std::vector<PlannedSystem>& out, std::set<std::string>& builtins_used,
                     std::set<std::string>& declared_unavailable,
                     std::vector<MissingSystem>* missing) {
  std::set<std::string> render_only_reported;
  const auto dirs = system_plugin_search_path(options);
  auto entity_name = [&](ecs::Entity e) {
    return registry.alive(e) ? registry.scoped_name(e) : "";
  };
  for (const auto& p : plugins) {
    const std::string by_name = builtin_key_from_name(p.name);
    const std::string by_file = builtin_key_from_filename(p.filename);
    const BuiltinSystem* match = nullptr;
    for (const auto& b : options.builtins) {
      const std::string k = normalize(b.name);
      if ((!by_name.empty() && k == by_name) || (!by_file.empty() && k == by_file)) match = &b;
    }
    const std::string origin = p.file + ":" + std::to_string(p.line);
    if (match) {
      PlannedSystem s;
      s.system = match->make();
      s.name = "kestrel::systems::" + std::string(match->name);
      s.origin = origin;
      s.source = SystemSource::kBuiltin;
      s.entity = p.entity;
      s.config = p.config;
      builtins_used.insert(normalize(match->name));
      out.push_back(std::move(s));
      continue;
    }
    External ext = load_external(p, dirs);
    if (ext.system) {
      PlannedSystem s;
      s.system = std::move(ext.system);
      s.name = p.name;
      s.origin = origin;
      s.library = ext.library.string();
      s.source = SystemSource::kExternal;
      s.entity = p.entity;
      s.config = p.config;
      out.push_back(std::move(s));
      continue;
    }
    if (!ext.error.empty()) {
      findings.error(p.file, p.line, entity_name(p.entity),
                     "plugin '" + p.name + "' (" + p.filename + "): " + ext.error);
      continue;
    }
    if (!by_name.empty()) declared_unavailable.insert(by_name);
    if (!by_file.empty()) declared_unavailable.insert(by_file);
    if (render_only_system(p)) {
      // Reported once per system: a world declares them once per camera or model.
      if (missing) missing->push_back({p.name, entity_name(p.entity), origin});
      if (!render_only_reported.insert(by_name.empty() ? by_file : by_name).second) continue;
      findings.warning(p.file, p.line, entity_name(p.entity),
                       "plugin '" + p.name + "' (filename '" + p.filename +
                           "') only serves Gazebo's GUI or its OGRE rendering (video recording, "
                           "shader parameters), which Kestrel does not have: the world runs "
                           "without it (reported once)");
      continue;
    }
    std::string searched;
    for (const auto& s : ext.searched) searched += (searched.empty() ? "" : ", ") + s.string();
    const bool blocks = options.strict || !options.allow_missing;
    if (!blocks && missing) missing->push_back({p.name, entity_name(p.entity), origin});
    findings.add(
        {blocks ? sdf::Severity::kError : sdf::Severity::kWarning, p.file, p.line,
         entity_name(p.entity),
         "plugin '" + p.name + "' (filename '" + p.filename +
             "') cannot be resolved: it is not a Kestrel built-in system (src/world/"
             "builtin.cc)" +
             (cannot_provide(p).empty()
                  ? std::string()
                  : ": Kestrel cannot provide it as Gazebo does, because " +
                        std::string(cannot_provide(p))) +
             " and no library was found; searched: " +
             (searched.empty() ? "(no directories: set KESTREL_SYSTEM_PLUGIN_PATH)" : searched) +
             (blocks ? ". A world runs with every system it declares "
                       "(--allow-missing-systems runs it without)"
                     : ". The world runs without it (--allow-missing-systems)")});
  }
}

}  // namespace

std::vector<PlannedSystem> plan_plugins(std::span<const PluginDecl> plugins,
                                        const ecs::Registry& registry,
                                        const ResolveOptions& options, Findings& findings) {
  std::vector<PlannedSystem> out;
  std::set<std::string> used, unavailable;
  resolve_plugins(plugins, registry, options, findings, out, used, unavailable, nullptr);
  return out;
}

std::vector<PlannedSystem> plan_systems(const WorldDescription& d, ecs::Entity world,
                                        const ecs::Registry& registry,
                                        const ResolveOptions& options, Findings& findings,
                                        std::vector<MissingSystem>* missing) {
  std::vector<PlannedSystem> out;
  std::set<std::string> builtins_used;         // normalized builtin names in the plan
  std::set<std::string> declared_unavailable;  // normalized keys of unresolved gz systems
  auto entity_name = [&](ecs::Entity e) {
    return registry.alive(e) ? registry.scoped_name(e) : "";
  };
  resolve_plugins(d.plugins, registry, options, findings, out, builtins_used, declared_unavailable,
                  missing);

  // Gazebo's defaults, merged in (never dropped because other plugins are declared).
  if (d.default_systems) {
    for (const auto& b : options.builtins) {
      if (!b.is_default || builtins_used.count(normalize(b.name))) continue;
      PlannedSystem s;
      s.system = b.make();
      s.name = "kestrel::systems::" + std::string(b.name);
      s.origin = "default";
      s.source = SystemSource::kDefault;
      s.entity = world;
      s.config = Element::empty("plugin");
      builtins_used.insert(normalize(b.name));
      out.push_back(std::move(s));
    }
  }

  // Sensors no system serves (a world's business: a model file checked on its own cannot
  // declare the world's sensor systems).
  static const decltype(d.sensors) kNone;
  for (const auto& [e, type] : d.model_file_of.empty() ? d.sensors : kNone) {
    bool served = false;
    for (const auto& b : options.builtins) {
      if (!builtins_used.count(normalize(b.name))) continue;
      std::string_view list = b.serves_sensors;
      while (!list.empty() && !served) {
        const auto sp = list.find(' ');
        served = list.substr(0, sp) == type;
        list = sp == std::string_view::npos ? std::string_view{} : list.substr(sp + 1);
      }
    }
    if (served) continue;
    const auto [gz, stem] = gazebo_system_for(type);
    const auto* loc = registry.try_get<components::SourceLocation>(e);
    const std::string why =
        declared_unavailable.count(normalize(gz))
            ? "its system gz::sim::systems::" + gz + " is declared but Kestrel does not provide it"
            : "declare <plugin filename=\"gz-sim-" + stem +
                  "-system\" name=\"gz::sim::systems::" + gz + "\"/> in the world";
    findings.warning(loc ? loc->file : d.file, loc ? loc->line : 0, entity_name(e),
                     "sensor '" + entity_name(e) + "' (" + type +
                         ") will produce no data: no system serves it; " + why);
  }

  // A world with no physics.
  if (!builtins_used.count("physics")) {
    findings.error(d.file, 0, "",
                   std::string("the world has no physics: nothing will move. ") +
                       (d.default_systems ? "Kestrel has no built-in Physics system in this build"
                                          : "It opts out of the default systems with "
                                            "<kestrel:no_default_systems/> and declares no "
                                            "gz-sim-physics-system plugin"));
  }
  return out;
}

}  // namespace kestrel::world
