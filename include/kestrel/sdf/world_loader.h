#pragma once
/// @file The world loader: SDF world files (via libsdformat 12, behind this header) → entities.
///
/// The loader fills an existing world entity (the Runner creates it) with the world's components
/// and creates one entity per model, link, joint, collision, visual, frame, sensor and light,
/// each with Name, ParentEntity, Pose (relative to its parent entity), WorldPose, SourceLocation
/// and the data components of components/world.h and components/model.h. Plugins are returned
/// as declarations (kestrel::PluginDecl, not instantiated): the composition layer
/// (include/kestrel/world/setup.h) turns them into systems.
///
/// Problems with the content of the world are collected as findings (never silently dropped);
/// a file that cannot be read or parsed at all throws UnreadableWorld. See src/sdf/README.md for
/// the supported elements and every finding.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <ignition/math/Pose3.hh>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/components/world.h"
#include "kestrel/core/element.h"
#include "kestrel/core/error.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sdf/finding.h"
#include "kestrel/system.h"

namespace kestrel::sdf {

/// The file cannot be read or parsed at all (missing, empty, too large, malformed XML, wrong
/// value types, recursive includes, no <world>). `kestrel check` exits 2 on it.
class UnreadableWorld : public Error {
 public:
  using Error::Error;
};

/// Entity counts of a loaded world (for the `check` summary).
struct WorldCounts {
  std::size_t models = 0, links = 0, joints = 0, collisions = 0, visuals = 0, frames = 0,
              sensors = 0, lights = 0;
};

/// What the loader learned about a world besides the entities it created.
struct WorldDescription {
  std::string name;                   ///< SDF <world name=...>
  std::string file;                   ///< the world file ("<string>" for in-memory SDF)
  components::PhysicsParams physics;  ///< also added to the world entity
  bool physics_declared = false;      ///< the world has a <physics> element
  /// false when the world opts out of Gazebo's default systems with <kestrel:no_default_systems/>.
  bool default_systems = true;
  std::vector<PluginDecl> plugins;  ///< in declaration order (world first, then depth first)
  /// Sensor entities with their SDF type (for "which system serves this sensor").
  std::vector<std::pair<ecs::Entity, std::string>> sensors;
  WorldCounts counts;
  /// Every element or attribute Kestrel ignored, "name (file:line)", also present as findings.
  std::vector<std::string> unsupported;
  Findings findings;
  std::vector<std::string> files;  ///< every file read (world first, then included files)
  /// World-level <include>s built from their model file's one parse (not re-parsed per include;
  /// see src/sdf/README.md, "Includes").
  std::size_t instanced = 0;
  /// The file was a model, loaded in an empty world (LoadOptions::model_as_world): its name.
  std::string model_file_of;
};

struct LoadOptions {
  /// Searched before the environment paths for model:// and relative URIs.
  std::vector<std::filesystem::path> resource_paths;
  /// Files larger than this are refused (UnreadableWorld) [bytes].
  std::size_t max_file_bytes = 64u << 20;
  /// A file holding a <model> and no <world> is loaded as that model in an empty world named
  /// "empty" (what `kestrel check model.sdf` does, like `gz sdf -k`); findings name the model
  /// file's lines; the folder holding the model's folder is searched last for model:// URIs (a
  /// model includes its siblings). Off: such a file is UnreadableWorld ("expected an SDF
  /// <world>").
  bool model_as_world = false;
};

/// Directories searched for `<include>` URIs, in order: options.resource_paths,
/// KESTREL_RESOURCE_PATH, GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH, SDF_PATH (each a
/// ':'-separated list), then `world_dir`.
std::vector<std::filesystem::path> resource_search_path(const LoadOptions& options,
                                                        const std::filesystem::path& world_dir);

/// Loads a world file into `registry`, filling `world` (an existing entity, normally the
/// Runner's) and creating entities beneath it.
/// @throws UnreadableWorld if the file cannot be read or parsed at all. Content problems are
///         returned as findings; the caller decides whether errors are fatal
///         (world::load_world_into_runner does).
WorldDescription load_world_file(const std::filesystem::path& path, ecs::Registry& registry,
                                 ecs::Entity world, const LoadOptions& options = {});

/// As load_world_file, from SDF text. `name_for_messages` is used as the file name in findings.
WorldDescription load_world_string(std::string_view sdf, ecs::Registry& registry, ecs::Entity world,
                                   const LoadOptions& options = {},
                                   const std::string& name_for_messages = "<string>");

/// Parses a model file once and spawns copies of it (Gazebo's "create" service parses the SDF
/// on every spawn; Kestrel keeps the parsed model). A file is parsed again when its size or
/// modification time changed since it was parsed (an edited model is never spawned stale), and
/// at most `capacity` parsed files are kept: the one used longest ago goes first, so a client
/// spawning ever new models cannot grow the process without bound. Not thread-safe: one cache
/// per thread/world.
class ModelCache {
 public:
  static constexpr std::size_t kDefaultCapacity = 64;
  explicit ModelCache(LoadOptions options = {}, std::size_t capacity = kDefaultCapacity);
  ~ModelCache();
  ModelCache(const ModelCache&) = delete;
  ModelCache& operator=(const ModelCache&) = delete;

  /// Spawns the model in `file` (a model .sdf, or a model directory with model.config) under
  /// `parent` (world or model) as `name` (empty: the model's own name) at X_PM = `pose`.
  /// The file is parsed on first use only (and again once it changed). Findings of the spawn
  /// are appended to `findings`.
  /// @returns the model entity. @throws UnreadableWorld if the file cannot be parsed;
  ///          Error if a sibling with that name exists.
  ecs::Entity spawn(const std::filesystem::path& file, ecs::Registry& registry, ecs::Entity parent,
                    const std::string& name, const ignition::math::Pose3d& pose,
                    Findings* findings = nullptr, std::vector<PluginDecl>* plugins = nullptr);
  /// Number of files actually parsed so far (for tests of "parse once").
  std::size_t parse_count() const { return parse_count_; }
  /// Number of parsed files kept now (at most the capacity).
  std::size_t size() const { return cache_.size(); }

 private:
  struct Parsed;
  LoadOptions options_;
  std::size_t capacity_;
  std::map<std::string, std::unique_ptr<Parsed>> cache_;
  std::size_t parse_count_ = 0;
  std::uint64_t uses_ = 0;
};

/// SDF text given in memory (a spawn request's) written to files for ModelCache: one file per
/// distinct text in a private temporary directory (named `prefix`-pid-address), named by the
/// text's hash (a file of that name holding another text moves it to the next suffix). At most
/// `kMaxFiles` are kept, the oldest written going first, as ModelCache drops what it parsed
/// longest ago: ever new texts cannot fill the disk. A text used again after its file went is
/// written anew (and, its file being new, parsed anew). Thread-safe; the directory goes with it.
class TextSpool {
 public:
  static constexpr std::size_t kMaxFiles = 2 * ModelCache::kDefaultCapacity;
  explicit TextSpool(std::string prefix) : prefix_(std::move(prefix)) {}
  ~TextSpool();
  TextSpool(const TextSpool&) = delete;
  TextSpool& operator=(const TextSpool&) = delete;

  /// The file holding `text`. @throws Error when the directory or the file cannot be written.
  std::filesystem::path write(const std::string& text);

 private:
  std::string prefix_;
  std::mutex mutex_;
  std::filesystem::path dir_;
  std::deque<std::filesystem::path> written_;  // oldest first
};

}  // namespace kestrel::sdf
