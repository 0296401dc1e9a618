#pragma once
/// @file A process-wide stop request (SIGINT/SIGTERM), for work that is not a step loop.
///
/// The Server's signal watcher (sim/server.h) records the signal here; loading a world checks
/// it between files, models and the physics build, so a signal during a long load stops it
/// there (`kestrel run` then exits 128 + the signal number without running anything). A library
/// call that cannot be interrupted (libsdformat's parse, MuJoCo's compiler) is waited for a
/// grace period, then the process exits (Server::install_signal_stop).

#include <atomic>
#include <string>

#include "kestrel/core/error.h"

namespace kestrel {

/// Thrown by throw_if_interrupted: the work was stopped by a signal.
class Interrupted : public Error {
 public:
  Interrupted(int signal, const std::string& during);
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Records that `signal` asked the process to stop (async-signal-safe: one atomic store).
void request_interrupt(int signal);
/// The signal that asked to stop, 0 if none.
int interrupt_signal();
/// @throws Interrupted if a signal asked to stop; `during` says what was being done ("loading
/// world.sdf").
void throw_if_interrupted(const std::string& during);

}  // namespace kestrel
