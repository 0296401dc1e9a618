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

/// Published by Runner::run when it returns normally (a limit reached, stop() — a signal), on
/// the step thread. Systems that write files flush them here and throw Error if what they wrote
/// did not all reach the file: run() then throws it and the run fails (exit 1).
struct RunEnded {
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

/// A request to build the world's physics as the world is now, at a step boundary, before a
/// change is answered: published on the step thread by whoever changed the world's structure or
/// physics parameters (a spawned model, a new gravity) to learn whether physics can simulate
/// it. The Physics system builds its model now — the build includes one trial step of the new
/// model, no commands — and sets `result->error` if that fails; its model is then the one it
/// had, and the publisher undoes its change. No handler (no Physics system): `handled` false.
struct CheckPhysics {
  struct Result {
    bool handled = false;
    std::string error;  ///< empty when physics can simulate the world
  };
  ecs::Registry* registry = nullptr;  ///< the world's registry (the publisher's)
  Result* result = nullptr;           ///< filled by the handler
};

}  // namespace kestrel::sim
