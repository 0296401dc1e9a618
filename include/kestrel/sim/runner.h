#pragma once
/// @file Runner: one world's step loop (Gazebo's SimulationRunner).
///
/// Owns the Registry, the EventBus, the systems and the initial snapshot used by reset. Control
/// requests (pause, step N, run to a time, reset, RTF, step size) may come from any thread; they
/// are queued and applied at the next step boundary.

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/event_bus.h"
#include "kestrel/sim/events.h"
#include "kestrel/sim/stop_signal.h"
#include "kestrel/system.h"

namespace kestrel {
class TaskPool;
}

namespace kestrel::sim {

/// A system instance as the Runner holds it.
struct SystemEntry {
  std::unique_ptr<System> system;
  ecs::Entity entity = ecs::kNullEntity;  ///< what it is attached to
  std::shared_ptr<const Element> config;  ///< its <plugin> element (or an empty one)
  std::string name;                       ///< e.g. "kestrel::systems::Physics"
  std::string origin;                     ///< where it came from: "world.sdf:12", "default"
  int priority = priority::kDefault;
  /// Added before configure() (from the world file or by the caller); false for systems added
  /// at run time with add_systems_now(), which reset() drops.
  bool initial = true;
  /// Takes part in the phases. remove_systems_of() clears it on initial systems (reset() brings
  /// them back with their entity) and destroys run-time ones.
  bool active = true;
  // Phase interfaces (null if not implemented), resolved once at add time.
  ISystemConfigurePriority* configure_priority = nullptr;
  ISystemConfigure* configure = nullptr;
  ISystemPreUpdate* pre_update = nullptr;
  ISystemUpdate* update = nullptr;
  ISystemPostUpdate* post_update = nullptr;
  ISystemReset* reset = nullptr;
  ISystemModelLocal* model_local = nullptr;
};

/// A system to add to a running world (Runner::add_systems_now).
struct NewSystem {
  std::unique_ptr<System> system;
  ecs::Entity entity = ecs::kNullEntity;  ///< what it is attached to (e.g. a spawned model)
  std::shared_ptr<const Element> config;  ///< its <plugin> element (or null: an empty one)
  std::string name;                       ///< e.g. "kestrel::systems::MulticopterMotorModel"
  std::string origin;                     ///< e.g. "/world/w/create: <model name='x3'>"
};

/// Run statistics. RTF is over a sliding window of the last ~1 s of wall time.
struct RunStats {
  Duration sim_time{0};
  Duration real_time{0};
  std::uint64_t iterations = 0;
  double rtf = 0;               ///< sim time / real time over the window
  double iterations_per_s = 0;  ///< over the window
  bool paused = false;
};

class Runner {
 public:
  struct Options {
    std::string world_name = "default";
    Duration step_size{1'000'000};  ///< [ns]
    double real_time_factor = 1.0;  ///< 0 = as fast as possible
    bool paused = false;            ///< start paused
    std::uint64_t seed = 0;         ///< world seed (systems derive their streams from it)
    /// Run PostUpdate of different systems concurrently on this many threads (0/1 = serial).
    unsigned post_update_threads = 0;
    /// Run the PreUpdate of model-local systems (ISystemModelLocal) of different top-level
    /// models concurrently on this many threads: 0 = the CPUs the process may run on, 1 =
    /// serial. Only a run of such systems (consecutive in priority order) spanning at least
    /// kMinParallelModels models is split; fewer cost less than waking a thread.
    unsigned model_threads = 0;
  };
  static constexpr std::size_t kMinParallelModels = 16;

  explicit Runner(Options options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  ecs::Registry& registry() { return registry_; }
  const ecs::Registry& registry() const { return registry_; }
  EventBus& events() { return events_; }
  const Options& options() const { return options_; }
  /// Changes options before configure() (e.g. to apply a world file's <physics>); the world
  /// entity's Name follows world_name. @pre configure() not yet called.
  void set_options(Options options);
  /// The world entity (created by the Runner, named options.world_name, with components::World).
  ecs::Entity world() const { return world_; }

  /// Adds a system. Priority: `config`'s <gz:system_priority> if present, else system->priority().
  /// Must be called before configure().
  SystemEntry& add_system(std::unique_ptr<System> system, ecs::Entity entity,
                          std::shared_ptr<const Element> config, std::string name,
                          std::string origin);
  /// Systems in run order (ascending priority, ties in add order), inactive ones included.
  const std::vector<SystemEntry>& systems() const { return systems_; }
  /// Gives systems()[index] a new <plugin> element for its configure() to read (a batch run's
  /// varied parameter); its priority stays the one add_system() took from the old element.
  /// @pre configure() not yet called.
  void set_config(std::size_t index, std::shared_ptr<const Element> config);

  /// Adds systems to the configured world, e.g. the plugins of a model spawned at run time.
  /// Call on the step thread at a step boundary (from a function given to post()). Each one's
  /// configure_priority, then configure, run now in priority order; they join the phases from
  /// the next one in priority order (after running systems of equal priority). reset() drops
  /// them, as it drops their entities. @throws Error from a configure: then none is added
  /// (the caller removes what they were for).
  void add_systems_now(std::vector<NewSystem> systems);
  /// Takes out every system attached to `root` or to an entity below it (a model being
  /// removed): run-time ones are destroyed, initial ones are set inactive until reset().
  /// Call on the step thread at a step boundary. Returns how many were taken out.
  std::size_t remove_systems_of(ecs::Entity root);

  /// Orders systems, runs configure_priority then configure on each, ends the setup step and
  /// takes the initial snapshot used by reset. @throws Error from any system's configure.
  void configure();

  // ---- running (call from the owning thread) ---------------------------------------------

  /// Runs one step if not paused (or one queued paused step); applies queued control first.
  /// Returns true if a step was simulated.
  bool step_once();
  /// Runs until stop() is called, the iteration limit or the sim time limit is reached, paced
  /// to the real-time factor — or to real time while any components::RealTimePacing is active.
  /// A step a system abandons with StepInterrupted (after stop()) ends the run. Blocking.
  void run(std::optional<std::uint64_t> max_iterations = std::nullopt,
           std::optional<Duration> max_sim_time = std::nullopt);
  /// Asks run() to return after the current step, and wakes a system blocked on the
  /// StopSignal (stop_signal.h). Thread-safe.
  void stop();
  bool stop_requested() const { return stop_requested_; }

  // ---- control (thread-safe; applied at the next step boundary) -------------------------------

  void set_paused(bool paused);
  /// Simulates n more steps then pauses (Gazebo's multi_step while paused).
  void step_n(std::uint64_t n);
  /// Runs (unpaused) until sim time reaches t, then pauses.
  void run_to(Duration t);
  /// Restores the initial snapshot, zeroes time, then calls reset on every system.
  /// time_only: only zero sim time and iterations.
  void request_reset(bool time_only = false);
  void set_real_time_factor(double rtf);
  void set_step_size(Duration dt);
  /// Sets the world seed (components::WorldSeed) at the end of the current step boundary and
  /// publishes WorldSeedChanged, so random streams restart from it: the same seed set at the
  /// same sim time gives bit-identical noise afterwards. reset() returns to the initial seed.
  void set_seed(std::uint64_t seed);
  /// Runs fn on the step thread at the next boundary; what fn posts runs at that boundary too.
  void post(std::function<void(Runner&)> fn);

  /// Resets immediately (from the owning thread).
  void reset_now(bool time_only = false);

  RunStats stats() const;
  UpdateInfo info() const { return info_; }
  /// The real-time factor the last step was paced to: 1 while a RealTimePacing is active,
  /// else options().real_time_factor.
  double paced_real_time_factor() const { return paced_rtf_; }

 private:
  void apply_control();
  void end_step();
  SystemEntry make_entry(std::unique_ptr<System> system, ecs::Entity entity,
                         std::shared_ptr<const Element> config, std::string name,
                         std::string origin) const;
  void rebuild_phases();
  void pre_update_phase();
  void post_update_phase();
  void pace();
  double wanted_real_time_factor() const;

  Options options_;
  ecs::Registry registry_;
  EventBus events_;
  ecs::Entity world_ = ecs::kNullEntity;
  std::vector<SystemEntry> systems_;
  std::vector<SystemEntry*> pre_, upd_, post_, reset_;
  std::optional<ecs::Snapshot> initial_;
  bool configured_ = false;

  UpdateInfo info_;
  bool paused_ = false;
  std::uint64_t steps_pending_ = 0;    // multi_step while paused
  std::optional<Duration> run_to_;     // run_to_sim_time target
  std::optional<std::uint64_t> seed_;  // set_seed, applied at the end of the step
  std::atomic<bool> stop_requested_{false};
  StopSignal stop_signal_;
  EventBus::Subscription stop_signal_request_;

  mutable std::mutex control_mutex_;
  std::deque<std::function<void(Runner&)>> control_;

  // Pacing and stats.
  double paced_rtf_ = 1.0;  // the factor pace() used last (RealTimePacing may override)
  std::chrono::steady_clock::time_point pace_origin_;
  Duration pace_sim_origin_{0};
  struct Sample {
    std::chrono::steady_clock::time_point wall;
    Duration sim;
    std::uint64_t it;
  };
  std::deque<Sample> window_;
  mutable std::mutex stats_mutex_;
  RunStats stats_;

  struct Pool;  // PostUpdate thread pool
  std::unique_ptr<Pool> pool_;

  // PreUpdate as segments of pre_: [begin, end) run in order, or, for a run of model-local
  // systems, `groups` (indices into pre_, one group per top-level model, each in order) run
  // concurrently on model_pool_.
  struct PreSegment {
    std::size_t begin = 0, end = 0;
    std::vector<std::vector<std::size_t>> groups;
  };
  std::vector<PreSegment> pre_segments_;
  std::unique_ptr<TaskPool> model_pool_;
  std::vector<std::pair<std::size_t, std::exception_ptr>> pre_errors_;  // per group
};

}  // namespace kestrel::sim
