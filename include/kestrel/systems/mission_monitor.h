#pragma once
/// @file MissionMonitor: what `kestrel run` shows for worlds with missions (MulticopterMission,
/// FixedWingMission: every model with a components::MissionState) — a live
/// status, the end of the run when every mission has completed or failed, a summary and the
/// exit code (0 only if every mission completed).

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kestrel/sim/runner.h"

namespace kestrel::systems {

class MissionMonitor {
 public:
  /// One vehicle's mission as last seen.
  struct Vehicle {
    std::string name;   ///< scoped model name
    std::string phase;  ///< mission_phase_name
    int waypoint = -1, waypoint_count = 0;
    double distance = 0;            ///< to the current target [m]
    double flight_time = 0;         ///< [s]
    double max_tracking_error = 0;  ///< [m]
    double energy_used = -1;        ///< battery energy drawn [J]; < 0 without a battery
    std::string reason;             ///< failure reason
  };

  /// Watches every model with a components::MissionState in a configured runner; returns null
  /// if there is none. With stop_when_done, asks the runner to stop once every mission has
  /// completed or failed. Call from the runner's thread before running it; the runner must
  /// outlive the monitor.
  static std::unique_ptr<MissionMonitor> attach(sim::Runner& runner, bool stop_when_done = true);

  /// "x3: waypoint 2/4, 3.1 m" (several vehicles: counts by phase). Thread-safe.
  std::string status() const;
  /// The vehicles as last seen. Thread-safe.
  std::vector<Vehicle> vehicles() const;
  /// Number of faults logged (components::FaultLog). Thread-safe.
  std::size_t faults() const;
  /// Prints "mission: completed|NOT completed" and per vehicle flight time, maximum tracking
  /// error, energy used (and the failure reason).
  void print_summary(std::FILE* out) const;
  /// 0 if every mission completed, 1 otherwise.
  int exit_code() const;

 private:
  MissionMonitor() = default;
  void refresh(const ecs::Registry& r);

  std::vector<ecs::Entity> models_;
  std::vector<std::string> names_;  // scoped names of models_
  sim::EventBus::Subscription sub_;
  mutable std::mutex m_;
  std::vector<Vehicle> vehicles_;
  std::size_t faults_ = 0;
  bool all_done_ = false;
};

}  // namespace kestrel::systems
