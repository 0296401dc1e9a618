#pragma once
/// @file System interfaces with Gazebo Sim's semantics.
///
/// A system is a class deriving from kestrel::System and from one or more phase interfaces.
/// The Runner calls, each step: PreUpdate (read-write; commands, controllers), Update
/// (read-write; physics), PostUpdate (read-only registry; sensors, publishers), each phase over
/// systems in ascending priority, ties in load order. Reset runs after the registry is restored
/// to its initial snapshot. Systems hold entity ids across steps, never component references.

#include <cstdint>
#include <memory>
#include <string>

#include "kestrel/core/element.h"
#include "kestrel/core/time.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/sim/event_bus.h"

namespace kestrel {

/// A `<plugin>` as declared (world-, model- or sensor-level): what asks for a system. The SDF
/// loader produces these; the composition layer (include/kestrel/world/setup.h) resolves them.
struct PluginDecl {
  std::string filename;                   ///< `filename` attribute as written
  std::string name;                       ///< `name` attribute as written
  ecs::Entity entity = ecs::kNullEntity;  ///< what it is attached to (world, model or sensor)
  std::shared_ptr<const Element> config;  ///< the whole <plugin> element, with file:line
  std::string file;                       ///< where it was declared
  int line = 0;
};

/// Priorities as Gazebo's, lower runs first. `<gz:system_priority>` in a plugin overrides.
namespace priority {
inline constexpr int kUserCommands = -16384;
inline constexpr int kPrePhysics = -128;
inline constexpr int kPhysics = -64;
inline constexpr int kPostPhysicsSensors = -32;
inline constexpr int kDefault = 0;
}  // namespace priority

/// What a system is told about the step being run.
struct UpdateInfo {
  Duration sim_time{0};          ///< sim time at the start of this step = iterations × dt [ns]
  Duration real_time{0};         ///< wall-clock time spent running (excludes paused time) [ns]
  Duration dt{0};                ///< the step size [ns]; 0 while paused
  std::uint64_t iterations = 0;  ///< steps completed before this one
  bool paused = false;
};

class System {
 public:
  virtual ~System() = default;
  /// Default priority; a plugin's `<gz:system_priority>` overrides it.
  virtual int priority() const { return priority::kDefault; }
};

/// Called once before any Configure, in priority order (Gazebo's ISystemConfigurePriority).
class ISystemConfigurePriority {
 public:
  virtual ~ISystemConfigurePriority() = default;
  virtual void configure_priority(ecs::Entity entity, const Element& config,
                                  ecs::Registry& registry, sim::EventBus& events) = 0;
};

/// Called once after load. `entity` is what the plugin is attached to (world, model or sensor);
/// `config` is its <plugin> element. Throw kestrel::Error on bad parameters (never default on).
class ISystemConfigure {
 public:
  virtual ~ISystemConfigure() = default;
  virtual void configure(ecs::Entity entity, const Element& config, ecs::Registry& registry,
                         sim::EventBus& events) = 0;
};

class ISystemPreUpdate {
 public:
  virtual ~ISystemPreUpdate() = default;
  virtual void pre_update(const UpdateInfo& info, ecs::Registry& registry) = 0;
};

/// A promise about a system's PreUpdate: it reads and writes only components of entities inside
/// the top-level model the system is attached to, reads the world entity's components without
/// writing them, adds and removes no component, and shares no other mutable state (logging
/// aside). The Runner may then run the PreUpdate of such systems attached to different top-level
/// models concurrently (Runner::Options::model_threads); each model's systems still run in
/// their order, so the results are the serial order's, bit for bit.
class ISystemModelLocal {
 public:
  virtual ~ISystemModelLocal() = default;
};

class ISystemUpdate {
 public:
  virtual ~ISystemUpdate() = default;
  virtual void update(const UpdateInfo& info, ecs::Registry& registry) = 0;
};

/// The registry is read-only here; with parallel PostUpdate enabled, systems may run
/// concurrently with each other, so they must not share mutable state.
class ISystemPostUpdate {
 public:
  virtual ~ISystemPostUpdate() = default;
  virtual void post_update(const UpdateInfo& info, const ecs::Registry& registry) = 0;
};

/// Called after the registry is restored to the world's initial state. A system must return
/// to the state it had right after configure (same outputs as a fresh run).
class ISystemReset {
 public:
  virtual ~ISystemReset() = default;
  virtual void reset(const UpdateInfo& info, ecs::Registry& registry) = 0;
};

}  // namespace kestrel
