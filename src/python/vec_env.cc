#include "python/vec_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

namespace kestrel::python {
namespace {

constexpr const char* kModel = "x3";  // the x3_hover task's vehicle
constexpr double kTerminationPenalty = 100;
constexpr double kMaxDistance = 10;  ///< from the target [m]: terminated beyond

std::uint64_t task_seed(std::uint64_t seed) {
  return sensors::derive_seed(seed, "x3_hover", "target");
}

}  // namespace

VecEnv::VecEnv(const VecEnvOptions& o) : options_(o) {
  if (o.num_envs == 0) throw ArgumentError("VecEnv: num_envs must be at least 1, found 0");
  if (o.frame_skip == 0) throw ArgumentError("VecEnv: frame_skip must be at least 1, found 0");
  if (o.task == "x3_hover") {
    has_task_ = true;
  } else if (!o.task.empty()) {
    throw ArgumentError(
        fmt::format("VecEnv: unknown task '{}' (tasks: 'x3_hover', or None)", o.task));
  }
  // Loaded one after the other (the loader is not meant to run concurrently), stepped together.
  for (std::size_t i = 0; i < o.num_envs; ++i) {
    WorldOptions w;
    w.path = o.path;
    w.seed = o.seed + i;
    worlds_.push_back(std::make_unique<World>(std::move(w)));
    episodes_.push_back({sensors::Rng(task_seed(o.seed + i))});
  }
  if (has_task_) {
    World& w = *worlds_.front();
    const auto rotors = w.rotor_speeds(kModel);
    if (rotors.size() != 4) {
      throw ArgumentError(fmt::format(
          "VecEnv task 'x3_hover': model '{}' of {} has {} motors, expected 4 (actuator numbers "
          "0-3)",
          kModel, o.path.string(), rotors.size()));
    }
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>(o.num_envs, o.threads ? o.threads : cores));
  // Steps follow each other within microseconds: the pool spins (core/task_pool.h) for up to
  // 200 us between them rather than paying a thread wake-up per step.
  if (threads > 1) pool_ = std::make_unique<TaskPool>(threads - 1, std::chrono::microseconds(200));
  for (std::size_t i = 0; i < size(); ++i) start_episode(i);
}

VecEnv::~VecEnv() = default;

void VecEnv::start_episode(std::size_t i) {
  Episode& e = episodes_[i];
  e.steps = 0;
  if (!has_task_) return;
  // A target anywhere in a 4 m × 4 m × 2 m box above the start: x, y in [-2, 2], z in [1, 3].
  e.target[0] = -2 + 4 * e.rng.uniform();
  e.target[1] = -2 + 4 * e.rng.uniform();
  e.target[2] = 1 + 2 * e.rng.uniform();
}

void VecEnv::reset(std::optional<std::uint64_t> seed, double* obs) {
  if (seed) options_.seed = *seed;
  auto one = [&](std::size_t i) {
    if (seed) {
      worlds_[i]->reset(*seed + i);
      episodes_[i].rng = sensors::Rng(task_seed(*seed + i));
    } else {
      worlds_[i]->reset(std::nullopt);
    }
    start_episode(i);
    if (obs) observe(i, obs + i * obs_dim());
  };
  if (pool_) {
    pool_->run(size(), one);
  } else {
    for (std::size_t i = 0; i < size(); ++i) one(i);
  }
}

void VecEnv::observe(std::size_t i, double* o) const {
  if (!has_task_) return;
  const World& w = *worlds_[i];
  const Pose7 p = w.model_pose(kModel);
  const Twist6 v = w.model_velocity(kModel);
  const Episode& e = episodes_[i];
  for (int k = 0; k < 3; ++k) o[k] = e.target[k] - p[k];
  for (int k = 0; k < 4; ++k) o[3 + k] = p[3 + k];
  for (int k = 0; k < 6; ++k) o[7 + k] = v[k];
}

double VecEnv::reward(std::size_t i, bool& terminated) const {
  terminated = false;
  if (!has_task_) return 0;
  const World& w = *worlds_[i];
  const Pose7 p = w.model_pose(kModel);
  const Twist6 v = w.model_velocity(kModel);
  const Episode& e = episodes_[i];
  const double d = std::hypot(p[0] - e.target[0], p[1] - e.target[1], p[2] - e.target[2]);
  const double speed = std::hypot(v[0], v[1], v[2]);
  const double spin = std::hypot(v[3], v[4], v[5]);
  double r = -d - 0.1 * speed - 0.05 * spin;
  // The body's z axis in the world: R e_z, its z component 1 - 2 (qx² + qy²).
  const double up_z = 1 - 2 * (p[4] * p[4] + p[5] * p[5]);
  if (up_z < 0 || d > kMaxDistance) {
    terminated = true;
    r -= kTerminationPenalty;
  }
  return r;
}

void VecEnv::step(const double* actions, const StepBuffers& out) {
  const std::size_t na = act_dim(), no = obs_dim();
  if (actions && has_task_) {  // checked before any world moves
    for (std::size_t k = 0; k < size() * na; ++k) {
      if (!std::isfinite(actions[k])) {
        throw ArgumentError(
            fmt::format("VecEnv.step: action [{}, {}] is {}, expected a finite "
                        "rotor speed [rad/s]",
                        k / na, k % na, actions[k]));
      }
    }
  }
  auto one = [&](std::size_t i) {
    World& w = *worlds_[i];
    if (actions && has_task_) {
      std::vector<double> speeds(actions + i * na, actions + (i + 1) * na);
      for (double& s : speeds) s = std::clamp(s, 0.0, kMaxRotorSpeed);
      w.set_motor_speeds(kModel, speeds);
    }
    w.step(options_.frame_skip);
    Episode& e = episodes_[i];
    ++e.steps;
    bool term = false;
    const double r = reward(i, term);
    const bool trunc = !term && options_.max_episode_steps && e.steps >= options_.max_episode_steps;
    if (out.reward) out.reward[i] = r;
    if (out.terminated) out.terminated[i] = term;
    if (out.truncated) out.truncated[i] = trunc;
    if (term || trunc) {
      if (out.final_obs) observe(i, out.final_obs + i * no);
      w.reset(std::nullopt);
      start_episode(i);
    }
    if (out.obs) observe(i, out.obs + i * no);
  };
  if (pool_) {
    pool_->run(size(), one);
  } else {
    for (std::size_t i = 0; i < size(); ++i) one(i);
  }
}

}  // namespace kestrel::python
