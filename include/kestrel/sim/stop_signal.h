#pragma once
/// @file How a system that blocks inside a phase (a SITL bridge waiting for its autopilot) learns
/// that the run is being stopped (Runner::stop(), e.g. by the Server's SIGINT/SIGTERM watcher).
///
/// The Runner owns one StopSignal; a system asks for it at configure with a StopSignalRequest on
/// the EventBus, polls fd() beside its own descriptors, and throws StepInterrupted when it
/// fires. Runner::run() then abandons the step and returns, as after any stop.

#include <atomic>
#include <exception>

namespace kestrel::sim {

class StopSignal {
 public:
  StopSignal();  ///< @throws Error if no eventfd can be made
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  /// Marks the stop and makes fd() readable. Thread-safe; idempotent.
  void raise();
  bool raised() const { return raised_.load(std::memory_order_acquire); }
  /// A descriptor that becomes readable (and stays so) once raise() was called: poll it for
  /// POLLIN, never read it.
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  std::atomic<bool> raised_{false};
};

/// An EventBus request, published by a system at configure: the Runner sets `*signal` to its
/// StopSignal (valid for the Runner's lifetime). Without a Runner nobody answers and `*signal`
/// stays null: then the system waits without it.
struct StopSignalRequest {
  const StopSignal** signal = nullptr;
};

/// Thrown from a phase by a system whose blocking wait was ended by the StopSignal. The step is
/// abandoned (the phases after it do not run); Runner::run() returns; step_once() rethrows.
class StepInterrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "the run was stopped during a step"; }
};

}  // namespace kestrel::sim
