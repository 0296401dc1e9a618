#pragma once
/// @file The composition layer: which systems a world runs. From a loaded world (src/sdf) to
/// running systems: plugin resolution (the built-in list, external libraries, Gazebo's
/// defaults), the one call `kestrel run` and `kestrel check` make, and the handler of
/// sim::LoadPlugins for models spawned at run time. Above src/sdf and every system library.
///
/// Resolution of `<plugin filename=F name=N>`:
///  1. A built-in system (world/builtin.h) whose name matches N's class (after
///     gz::sim::systems::, ignition::gazebo::systems::, kestrel::systems:: or no namespace), or
///     whose name matches F (gz-sim-X-system, ignition-gazebo[N]-X-system, kestrel-X-system,
///     with or without lib and .so); names compare without case, '-' or '_'.
///  2. Else a shared library F (exact, libF.so, F.so, libF) on the plugin search path, loaded
///     with ignition-plugin; the system in it is chosen by N (its KESTREL_ADD_SYSTEM alias).
///  3. Else an error naming the plugin and every path searched (a world runs with every system
///     it declares or not at all), a warning with allow_missing; a system that only serves a
///     GUI or rendering is a warning, reported once per system.
/// Gazebo's default systems that are built in (Physics, UserCommands, SceneBroadcaster, as
/// they exist) are added to the world unless declared or the world has
/// <kestrel:no_default_systems/>.

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kestrel/sdf/world_loader.h"
#include "kestrel/sim/runner.h"
#include "kestrel/world/builtin.h"

namespace kestrel::world {

using sdf::Findings;
using sdf::LoadOptions;
using sdf::WorldDescription;

enum class SystemSource { kBuiltin, kExternal, kDefault };
const char* source_name(SystemSource s);

/// A system ready to be added to a Runner.
struct PlannedSystem {
  std::unique_ptr<System> system;
  std::string name;     ///< "kestrel::systems::Physics" or the external alias
  std::string origin;   ///< "world.sdf:12" for declared systems, "default" for defaults
  std::string library;  ///< the shared library path (external systems only)
  SystemSource source = SystemSource::kBuiltin;
  ecs::Entity entity = ecs::kNullEntity;  ///< attached to (world, model or sensor)
  std::shared_ptr<const Element> config;  ///< the <plugin> element (empty element for defaults)
};

struct ResolveOptions {
  /// The built-in systems (tests may substitute their own list).
  std::span<const BuiltinSystem> builtins = builtin_systems();
  /// Searched first for external system libraries.
  std::vector<std::filesystem::path> plugin_paths;
  /// Unresolved plugins are errors instead of warnings.
  bool strict = false;
  /// A plugin no built-in system or library provides is a warning, and the world runs without
  /// it (`--allow-missing-systems`); otherwise it is an error: `kestrel run` refuses the world.
  /// Plugins that only serve a GUI or rendering (render_only_system) are warnings either way.
  bool allow_missing = false;
};

/// A declared plugin the world runs without (allow_missing): for the start and final summary
/// of `kestrel run`.
struct MissingSystem {
  std::string name;    ///< the plugin's name ("gz::sim::systems::DiffDrive")
  std::string entity;  ///< scoped name of the entity it was declared on
  std::string origin;  ///< "world.sdf:279"
};

/// True for a Gazebo system that only serves a GUI or rendering Kestrel does not do (the
/// rendering Sensors system, video recorders, shader parameters, segmentation labels): a world
/// without it runs as it would in Gazebo without a GUI. Matched by name or filename as built-ins.
bool render_only_system(const PluginDecl& plugin);

/// Directories searched for system libraries: options.plugin_paths, then
/// KESTREL_SYSTEM_PLUGIN_PATH, GZ_SIM_SYSTEM_PLUGIN_PATH, IGN_GAZEBO_SYSTEM_PLUGIN_PATH.
std::vector<std::filesystem::path> system_plugin_search_path(const ResolveOptions& options);

/// Resolves every plugin of `world` plus the defaults, instantiating each system (external
/// libraries are loaded). Adds to `findings`: unresolved plugins, sensors no system serves,
/// a world with no physics.
/// `missing` (if given) receives the declared plugins left out (allow_missing or render-only).
std::vector<PlannedSystem> plan_systems(const WorldDescription& world, ecs::Entity world_entity,
                                        const ecs::Registry& registry,
                                        const ResolveOptions& options, Findings& findings,
                                        std::vector<MissingSystem>* missing = nullptr);

/// Resolves plugins declared outside a world file's load (a model spawned at run time) as
/// plan_systems does, without Gazebo's defaults or world-level checks: unresolved plugins are
/// findings (errors when options.strict).
std::vector<PlannedSystem> plan_plugins(std::span<const PluginDecl> plugins,
                                        const ecs::Registry& registry,
                                        const ResolveOptions& options, Findings& findings);

struct WorldSetupOptions {
  LoadOptions load;
  ResolveOptions resolve;
  /// Every warning counts as an error (`--strict`).
  bool strict = false;
  /// Apply the world's <physics> step size and real-time factor to the Runner.
  bool apply_physics = true;
  /// Add the world's systems (declared and defaults) and the handler that loads spawned
  /// models' plugins. false: only its entities (`kestrel replay`, whose registry is driven by a
  /// recording instead of simulated).
  bool add_systems = true;
};

/// What `kestrel run` gets back: the loaded world, the systems added, all findings.
struct WorldSetup {
  WorldDescription description;
  /// (name, source, origin) of each system added, in declaration order.
  struct SystemInfo {
    std::string name;
    SystemSource source;
    std::string origin;
  };
  std::vector<SystemInfo> systems;
  /// Declared plugins the world runs without (ResolveOptions::allow_missing, render-only ones).
  std::vector<MissingSystem> missing;
  Findings findings;  ///< loader findings then resolution findings
};

/// Loads `world_file` into `runner` (entities under runner.world(), renamed to the SDF world
/// name), adds every system (declared built-in and external ones, then defaults), applies
/// <physics> and installs the runner's sim::LoadPlugins handler (resolving with
/// `options.resolve`, unresolved plugins always errors). Call before runner.configure().
/// @throws sdf::UnreadableWorld if the file cannot be read or parsed; Error listing every error
///         finding (warnings too with strict) if the world has errors. Warnings are returned.
WorldSetup load_world_into_runner(const std::filesystem::path& world_file, sim::Runner& runner,
                                  const WorldSetupOptions& options = {});

}  // namespace kestrel::world
