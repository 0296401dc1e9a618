#include "noise.h"

#include <cmath>
#include <numbers>

namespace kestrel::sensors {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

std::uint64_t fnv1a(std::uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void reject_unread(const Element& e, std::string_view what) {
  const auto unread = e.unread_children();
  if (unread.empty()) return;
  std::string names;
  for (const Element* c : unread) names += (names.empty() ? "<" : ", <") + c->name() + ">";
  throw Error(unread.front()->where(),
              "unknown parameter " + names + " in <" + e.name() + "> (" + std::string(what) + ")");
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  // 1 - uniform() is in (0, 1]: the logarithm is finite.
  const double r = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  const double phi = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(phi);
  has_spare_ = true;
  return r * std::cos(phi);
}

std::uint64_t derive_seed(std::uint64_t world_seed, std::string_view scoped_name,
                          std::string_view channel) {
  std::uint64_t h = fnv1a(0xcbf29ce484222325ULL, scoped_name);
  h = fnv1a(h ^ 0xff, channel);
  std::uint64_t x = world_seed ^ h;
  splitmix64(x);
  return splitmix64(x);
}

NoiseParams parse_noise(const Element* noise) {
  NoiseParams p;
  if (!noise) return p;
  // <noise type="..."> (noise.sdf); camera.sdf and lidar.sdf spell it <noise><type>..</type>.
  std::string type = noise->attribute("type").value_or("");
  if (const Element* t = noise->child("type")) {
    if (!type.empty() && type != t->text()) {
      throw Error(t->where(),
                  "<noise type=\"" + type + "\"> and <type>" + t->text() + "</type> disagree");
    }
    type = t->text();
  }
  if (type == "none") {
    p.type = NoiseParams::Type::kNone;
  } else if (type == "gaussian") {
    p.type = NoiseParams::Type::kGaussian;
  } else if (type == "gaussian_quantized") {
    p.type = NoiseParams::Type::kGaussianQuantized;
  } else {
    throw Error(noise->where(), "<noise type=\"" + type +
                                    "\">: expected type none, gaussian or gaussian_quantized");
  }
  p.mean = noise->get_or<double>("mean", 0.0);
  p.stddev = noise->get_or<double>("stddev", 0.0);
  p.bias_mean = noise->get_or<double>("bias_mean", 0.0);
  p.bias_stddev = noise->get_or<double>("bias_stddev", 0.0);
  p.dynamic_bias_stddev = noise->get_or<double>("dynamic_bias_stddev", 0.0);
  p.dynamic_bias_correlation_time = noise->get_or<double>("dynamic_bias_correlation_time", 0.0);
  p.precision = noise->get_or<double>("precision", 0.0);
  reject_unread(*noise, "expected mean, stddev, bias_mean, bias_stddev, dynamic_bias_stddev, "
                        "dynamic_bias_correlation_time, precision");
  auto non_negative = [&](double v, const char* name) {
    if (!(v >= 0) || !std::isfinite(v)) {
      throw Error(noise->where(), std::string("<noise><") + name +
                                      "> must be a finite value >= 0, found " + std::to_string(v));
    }
  };
  non_negative(p.stddev, "stddev");
  non_negative(p.bias_stddev, "bias_stddev");
  non_negative(p.dynamic_bias_stddev, "dynamic_bias_stddev");
  non_negative(p.dynamic_bias_correlation_time, "dynamic_bias_correlation_time");
  non_negative(p.precision, "precision");
  if (!std::isfinite(p.mean) || !std::isfinite(p.bias_mean)) {
    throw Error(noise->where(), "<noise> mean and bias_mean must be finite");
  }
  if (p.dynamic_bias_stddev > 0 && p.dynamic_bias_correlation_time <= 0) {
    throw Error(noise->where(), "<noise><dynamic_bias_stddev> " +
                                    std::to_string(p.dynamic_bias_stddev) +
                                    " needs a <dynamic_bias_correlation_time> > 0 [s]");
  }
  if (p.precision > 0 && p.type != NoiseParams::Type::kGaussianQuantized) {
    throw Error(noise->where(), "<noise><precision> only applies to type gaussian_quantized, found "
                                "type \"" + type + "\"");
  }
  return p;
}

NoiseParams parse_axis_noise(const Element* parent) {
  if (!parent) return {};
  const NoiseParams p = parse_noise(parent->child("noise"));
  reject_unread(*parent, "expected <noise>");
  return p;
}

Noise::Noise(const NoiseParams& params, std::uint64_t seed) : params_(params), rng_(seed) {
  if (params_.type == NoiseParams::Type::kNone) return;
  bias_fixed_ = params_.bias_mean;
  bias_random_ = params_.bias_stddev * rng_.normal();
  // Gazebo's convention: bias_mean is a magnitude, the sign is drawn with probability 1/2.
  if (rng_.uniform() < 0.5) {
    bias_fixed_ = -bias_fixed_;
    bias_random_ = -bias_random_;
  }
}

double Noise::apply(double x, NoiseStep step) {
  if (params_.type == NoiseParams::Type::kNone) return x;
  const double dt_s = step.dt_s, s = step.scale;
  if (params_.dynamic_bias_stddev > 0 && dt_s > 0) {
    // First-order Gauss-Markov process with stationary deviation sigma and time constant tau,
    // discretized exactly: b' = phi b + w, phi = exp(-dt/tau), var(w) = sigma^2 (1 - phi^2).
    const double phi = std::exp(-dt_s / params_.dynamic_bias_correlation_time);
    const double sd = params_.dynamic_bias_stddev * std::sqrt(-std::expm1(-2.0 * dt_s /
                                                          params_.dynamic_bias_correlation_time));
    dynamic_bias_ = phi * dynamic_bias_ + sd * rng_.normal();
  }
  // The bias sum is formed first, as ±(bias_mean + bias_stddev·n₀) was: s = 1 gives the
  // unfaulted value bit for bit.
  const double bias = bias_fixed_ + s * bias_random_;
  double y = x + bias + s * dynamic_bias_ + params_.mean + s * params_.stddev * rng_.normal();
  if (params_.type == NoiseParams::Type::kGaussianQuantized && params_.precision > 0) {
    y = std::round(y / params_.precision) * params_.precision;
  }
  return y;
}

}  // namespace kestrel::sensors
