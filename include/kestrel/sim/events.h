#pragma once
/// @file The events the Runner and systems exchange on the EventBus (sim/event_bus.h). Systems
/// include this header, never the Runner's.

#include <cstdint>
#include <span>
#include <string>

#include "kestrel/ecs/registry.h"
#include "kestrel/system.h"

namespace kestrel::sim {

/// Published by the Runner after each step (after PostUpdate, before end_step).
struct StepDone {
  UpdateInfo info;
};

/// Published by the Runner when the world seed changes at run time (Runner::set_seed), at a
/// step boundary, on the step thread. Systems with random streams derive them again from
/// `seed`, so that noise after the change depends only on the seed and the sim time.
struct WorldSeedChanged {
  std::uint64_t seed = 0;  ///< the new world seed
  /// The world's registry temporarily restored to its initial state (right after configure)
  /// with WorldSeed = seed: streams are derived from the same context as at configure (e.g. a
  /// reference altitude). Anything a handler writes to it is discarded. Entities created after
  /// configure are not alive in it.
  ecs::Registry* initial_state = nullptr;
};

/// A request to start the systems that entities created at run time declare (a model spawned
/// through /world/W/create): gz-sim's LoadSdfPlugins event. Published on the step thread at a
/// step boundary by whoever created the entities. The composition layer that set the world up
/// (include/kestrel/world/setup.h) handles it: it resolves every plugin as it resolves a world
/// file's (an unresolved one is an error), configures the systems in priority order and adds
/// them to the running world — all of them, or none and `result->error` says why.
/// No handler (a world not set up by the composition layer) leaves `result->handled` false.
struct LoadPlugins {
  struct Result {
    bool handled = false;
    std::string error;  ///< empty on success
  };
  std::span<const PluginDecl> plugins;
  Result* result = nullptr;  ///< filled by the handler
};

}  // namespace kestrel::sim
