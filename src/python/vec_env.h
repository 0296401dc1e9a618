#pragma once
// The C++ side of kestrel.VecEnv (src/python/README.md): N worlds of one file, world i seeded
// seed + i, stepped in parallel on a TaskPool, with one task's observations, rewards,
// termination and automatic reset written into caller-owned (N, ...) buffers.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kestrel/core/task_pool.h"
#include "python/world.h"
#include "sensors/noise/noise.h"

namespace kestrel::python {

struct VecEnvOptions {
  std::filesystem::path path;
  std::size_t num_envs = 1;
  std::uint64_t seed = 0;
  /// "x3_hover" (the README's task) or "" (no task: no observations or rewards, step(None)).
  std::string task = "x3_hover";
  std::uint32_t frame_skip = 10;          ///< physics steps per env step
  std::uint32_t max_episode_steps = 500;  ///< env steps before truncation (0: never)
  unsigned threads = 0;                   ///< stepping threads, the caller's included (0: cores)
};

/// One env step's results, each row-major (N, ...).
struct StepBuffers {
  double* obs = nullptr;        ///< (N, obs_dim)
  double* reward = nullptr;     ///< (N,)
  bool* terminated = nullptr;   ///< (N,)
  bool* truncated = nullptr;    ///< (N,)
  double* final_obs = nullptr;  ///< (N, obs_dim): the last observation of an episode that ended
};

class VecEnv {
 public:
  explicit VecEnv(const VecEnvOptions& options);
  ~VecEnv();

  std::size_t size() const { return worlds_.size(); }
  World& world(std::size_t i) { return *worlds_.at(i); }
  std::size_t obs_dim() const { return has_task_ ? 13 : 0; }
  std::size_t act_dim() const { return has_task_ ? 4 : 0; }
  double max_rotor_speed() const { return kMaxRotorSpeed; }
  const VecEnvOptions& options() const { return options_; }

  /// Resets every world (a seed restarts the task's random streams: env i from seed + i).
  void reset(std::optional<std::uint64_t> seed, double* obs);
  /// Applies actions (N, act_dim) [rad/s], or none (nullptr: the worlds' own systems fly),
  /// steps every world frame_skip steps in parallel, and resets the envs whose episode ended.
  void step(const double* actions, const StepBuffers& out);

 private:
  static constexpr double kMaxRotorSpeed = 800;  ///< the X3's maxRotVelocity [rad/s]
  struct Episode {
    sensors::Rng rng;
    double target[3] = {0, 0, 0};  ///< world ENU [m]
    std::uint32_t steps = 0;
  };
  void start_episode(std::size_t i);
  void observe(std::size_t i, double* obs) const;
  double reward(std::size_t i, bool& terminated) const;

  VecEnvOptions options_;
  bool has_task_ = false;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<Episode> episodes_;
  std::unique_ptr<TaskPool> pool_;
};

}  // namespace kestrel::python
