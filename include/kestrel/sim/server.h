#pragma once
/// @file Server: runs one Runner per world, each on its own thread, and stops them cleanly.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "kestrel/sim/runner.h"

namespace kestrel::sim {

class Server {
 public:
  /// Limits applied to every world's run.
  struct Limits {
    std::optional<std::uint64_t> max_iterations;
    std::optional<Duration> max_sim_time;
  };

  Server() = default;
  ~Server();  ///< stops and joins every world
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Takes a configured Runner. @pre runner->configure() was called.
  Runner& add(std::unique_ptr<Runner> runner);
  std::size_t size() const { return worlds_.size(); }
  Runner& world(std::size_t i) { return *worlds_[i].runner; }

  /// Runs every world on the calling thread (one world) or on one thread each; returns when all
  /// have finished. Rethrows the first error a world threw (after stopping the others).
  void run(Limits limits = {});
  /// Starts every world on its own thread and returns at once.
  void start(Limits limits = {});
  /// Waits for every started world; rethrows the first error.
  void wait();
  /// Asks every world to stop after its current step. Thread- and signal-safe to call from
  /// a watcher thread (not from a signal handler itself: see install_signal_stop).
  void stop();
  bool running() const { return running_ > 0; }

  /// Makes SIGINT and SIGTERM stop this server cleanly (a watcher thread waits on the signals;
  /// no work happens inside a signal handler). Returns the signal that arrived, 0 if none, via
  /// signal_received(). Call once, before loading and run()/start(). A signal is also recorded
  /// process-wide (core/interrupt.h), so a load in progress stops at its next check.
  void install_signal_stop();
  int signal_received() const { return signal_.load(); }

  /// Marks the time a world is being loaded (before add()). A signal then interrupts the load
  /// at its next check; if the load is inside a library call that cannot be interrupted and
  /// does not return within `grace`, the watcher ends the process with 128 + the signal after
  /// one line on stderr (nothing has run, nothing is left half-written).
  void set_loading(bool loading, std::chrono::milliseconds grace = std::chrono::seconds(2));

 private:
  struct World {
    std::unique_ptr<Runner> runner;
    std::thread thread;
    std::exception_ptr error;
  };
  std::vector<World> worlds_;
  std::atomic<int> running_{0};
  std::atomic<int> signal_{0};
  std::thread signal_thread_;
  std::atomic<bool> signal_thread_quit_{false};
  std::atomic<bool> loading_{false};
  std::atomic<std::int64_t> grace_ms_{2000};
};

}  // namespace kestrel::sim
