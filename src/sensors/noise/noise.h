#pragma once
// The one noise module of every sensor: SDF <noise> (none / gaussian / gaussian_quantized) with
// a constant bias drawn once per run, a Gauss-Markov dynamic bias and quantization, driven by a
// deterministic random stream derived from the world seed and the sensor's scoped name.

#include <cstdint>
#include <string>
#include <string_view>

#include "kestrel/core/element.h"

namespace kestrel::sensors {

/// A small, fast, deterministic generator (xoshiro256**, seeded through splitmix64). Its output
/// depends only on the seed, on every platform (unlike std::normal_distribution).
class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  std::uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal (Box–Muller; the second value of each pair is kept for the next call).
  double normal();

 private:
  std::uint64_t s_[4];
  double spare_ = 0;
  bool has_spare_ = false;
};

/// The seed of one random stream: a hash of the world seed, the entity's scoped name
/// ("world::model::link::sensor") and a channel name ("angular_velocity/x").
std::uint64_t derive_seed(std::uint64_t world_seed, std::string_view scoped_name,
                          std::string_view channel);

/// SDF <noise> parameters (sdformat 1.9 names; units are those of the quantity measured).
struct NoiseParams {
  enum class Type { kNone, kGaussian, kGaussianQuantized };
  Type type = Type::kNone;
  double mean = 0;                           ///< white-noise mean
  double stddev = 0;                         ///< white-noise standard deviation
  double bias_mean = 0;                      ///< constant-bias mean (magnitude; sign random)
  double bias_stddev = 0;                    ///< constant-bias standard deviation
  double dynamic_bias_stddev = 0;            ///< Gauss-Markov bias stationary std deviation
  double dynamic_bias_correlation_time = 0;  ///< Gauss-Markov correlation time [s]
  double precision = 0;                      ///< quantum of gaussian_quantized output (0: none)
};

/// Parses a <noise> element (type as attribute, or as a <type> child as camera.sdf and
/// lidar.sdf write it); nullptr means "no noise". Reads every parameter with Element's
/// loud getters. @throws Error (file:line) on an unknown type, a negative standard deviation or
/// time, precision without gaussian_quantized, or an unknown child element.
NoiseParams parse_noise(const Element* noise);

/// Parses the <noise> child of `parent` (which may be nullptr or have no <noise>: no noise).
/// Also rejects any other child of `parent` (only <noise> is valid inside an axis element).
NoiseParams parse_axis_noise(const Element* parent);

/// One sample's step of a noise channel.
struct NoiseStep {
  double dt_s = 0;  ///< time since the previous sample [s] (advances the Gauss-Markov bias)
  /// Multiplies the contribution of every standard deviation (white noise, the constant bias's
  /// random part, the Gauss-Markov bias), never the random draws themselves: a sensor fault's
  /// noise_scale (components::SensorFault). 1 = the configured noise.
  double scale = 1.0;
};

/// One noise channel: the state (random stream, constant bias, dynamic bias) of one scalar
/// measurement. Copyable: a copy taken after construction restores a fresh run exactly.
class Noise {
 public:
  Noise() = default;
  /// Draws the constant bias from N(bias_mean, bias_stddev) with a random sign, as Gazebo does.
  Noise(const NoiseParams& params, std::uint64_t seed);
  /// x + bias + dynamic bias + N(mean, stddev), quantized if gaussian_quantized; with
  /// step.scale s: x ± (bias_mean + s·bias_stddev·n₀) + s·(dynamic bias) + mean + s·stddev·n.
  /// The same numbers are drawn whatever s is.
  double apply(double x, NoiseStep step);
  /// apply(x, {dt_s, 1}).
  double apply(double x, double dt_s) { return apply(x, NoiseStep{dt_s, 1.0}); }
  double variance() const { return params_.stddev * params_.stddev; }
  /// The constant bias drawn at construction (unscaled).
  double bias() const { return bias_fixed_ + bias_random_; }
  /// The Gauss-Markov bias's state (unscaled).
  double dynamic_bias() const { return dynamic_bias_; }
  const NoiseParams& params() const { return params_; }
  bool enabled() const { return params_.type != NoiseParams::Type::kNone; }

 private:
  NoiseParams params_;
  Rng rng_;
  // The constant bias, ±(bias_mean + bias_stddev·n₀): its signed mean and its random part.
  double bias_fixed_ = 0, bias_random_ = 0;
  double dynamic_bias_ = 0;
};

}  // namespace kestrel::sensors
