#pragma once
// The C++ side of kestrel.World (src/python/README.md): one world loaded as `kestrel run
// --no-transport` loads it, stepped by the caller's thread, and the queries and commands of
// the Python API in plain C++ types. No pybind11 here: module.cc binds it.

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/sdf/world_loader.h"
#include "kestrel/sim/runner.h"
#include "kestrel/world/builtin.h"

namespace kestrel::python {

/// x y z [m] then qw qx qy qz: a pose in the world frame (ENU).
using Pose7 = std::array<double, 7>;
/// vx vy vz [m/s] (world frame) then wx wy wz [rad/s] (body frame), as the truth CSV's columns.
using Twist6 = std::array<double, 6>;
using Vec3 = std::array<double, 3>;

/// A bad name or argument from the caller (module.cc raises KeyError / ValueError for these);
/// everything else Kestrel throws is a kestrel::Error (kestrel.Error in Python).
struct NameError : Error {
  using Error::Error;
};
struct ArgumentError : Error {
  using Error::Error;
};
/// A world file that does not exist (FileNotFoundError in Python).
struct PathError : Error {
  using Error::Error;
};

struct WorldOptions {
  std::filesystem::path path;
  std::uint64_t seed = 0;
  double rtf = 0;  ///< real-time factor; 0 = as fast as possible (the world's own is not used)
  /// Systems added to the world before it is configured (Python systems), on the world entity.
  std::vector<std::pair<std::unique_ptr<System>, std::string>> systems;
  /// The built-in list plus any the binding adds (the Python system), for <plugin> resolution.
  std::span<const world::BuiltinSystem> builtins = world::builtin_systems();
};

class World {
 public:
  /// Loads and configures the world. @throws NameError if the file does not exist;
  /// kestrel::Error with the findings (file:line) if it cannot be loaded or configured.
  explicit World(WorldOptions options);
  ~World();

  sim::Runner& runner() { return *runner_; }
  const sim::Runner& runner() const { return *runner_; }
  ecs::Registry& registry() { return runner_->registry(); }
  const ecs::Registry& registry() const { return runner_->registry(); }

  /// Simulates exactly n steps, paused or not (a paused world stays paused), paced to the
  /// real-time factor when it is > 0.
  void step(std::uint64_t n);
  /// Back to the state right after loading; with a seed, the world seed is then set to it (the
  /// random streams restart from it, as if loaded with that seed).
  void reset(std::optional<std::uint64_t> seed);

  double time() const;  ///< sim time [s]
  std::uint64_t iterations() const { return runner_->info().iterations; }
  bool paused() const { return paused_; }
  void set_paused(bool paused);
  std::uint64_t seed() const;
  std::string name() const { return runner_->options().world_name; }
  double step_size() const;  ///< [s]

  /// Top-level models, in load order.
  std::vector<std::string> models() const;
  /// Scoped names of the model's links below the model ("base_link", "arm::link").
  std::vector<std::string> links(const std::string& model) const;
  Pose7 model_pose(const std::string& model) const;
  /// Teleports the model (velocities kept), as the set_pose service does. @throws ArgumentError
  /// for a pose that is not finite or outside the world.
  void set_model_pose(const std::string& model, const Pose7& pose);
  Twist6 model_velocity(const std::string& model) const;
  /// Every joint of the model (scoped below it) and its coordinates (JointPosition).
  std::vector<std::pair<std::string, std::vector<double>>> joint_positions(
      const std::string& model) const;
  /// JointVelocityCmd, held every step until cleared (an empty vector clears it).
  void set_joint_velocity_cmd(const std::string& model, const std::string& joint,
                              const std::vector<double>& velocity);
  /// ActuatorCommands of the model (rotor speeds [rad/s] by actuator number), held until the
  /// next call, exactly as a message on its motor_speed topic. @throws ArgumentError if the
  /// count does not match the model's motors (when it has any) or a value is not finite.
  void set_motor_speeds(const std::string& model, const std::vector<double>& speeds);
  /// RotorVelocities of the model [rad/s] by actuator number (empty without motor models).
  std::vector<double> rotor_speeds(const std::string& model) const;
  /// Adds a world-frame wrench at the link origin to the link's ExternalWorldWrenchCmd for the
  /// next step (as gz-sim's Link.add_world_wrench). `link` is "model::link" (scoped).
  void apply_wrench(const std::string& link, const Vec3& force, const Vec3& torque);
  /// The sensor entity by scoped name (with or without the world's name in front).
  ecs::Entity sensor(const std::string& scoped_name) const;
  /// Spawns the <model> in `sdf_text` as the create service does: its plugins start, physics
  /// must accept it, else nothing is added. Returns the model's name.
  std::string spawn(const std::string& sdf_text);
  /// Removes a top-level model and its systems (gone after the next step).
  void remove(const std::string& model);
  /// Adds systems to the running world on the world entity (configured now; reset() drops
  /// them, as the Runner drops every system added after configure).
  void add_systems_now(std::vector<sim::NewSystem> systems);

  ecs::Entity model(const std::string& name) const;
  ecs::Entity link(const std::string& scoped) const;

  /// True while a Python system's post_update runs (the registry is read-only in PostUpdate,
  /// as in gz-sim): every command above then throws. Set by the binding.
  bool read_only = false;
  /// True while step() runs: a system must not step its own world.
  bool stepping() const { return stepping_; }

  /// The world whose systems are being configured or stepped on this thread (the Python system
  /// a <plugin> creates finds its World here), or nullptr.
  static World* current();

 private:
  ecs::Entity find_in_model(const std::string& model, const std::string& scoped) const;
  void demand_writable(const char* what) const;
  bool stepping_ = false;

  std::unique_ptr<sim::Runner> runner_;
  bool paused_ = false;
  sdf::ModelCache cache_;
  sdf::TextSpool spool_{"kestrel-python"};  // spawned SDF text, as the create service spools it
};

}  // namespace kestrel::python
