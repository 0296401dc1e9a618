#include "sitl/exchange_cost.h"

#include <fmt/core.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kestrel::sitl {
namespace {

double thread_cpu_s() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A run keeps at most this many samples (hours of lockstep at 250 Hz); later ones are dropped.
constexpr std::size_t kMaxSamples = 1 << 22;

}  // namespace

void ExchangeCost::exchange() {
  const double now = thread_cpu_s();
  if (last_s_ >= 0 && samples_.size() < kMaxSamples) {
    samples_.push_back(static_cast<float>((now - last_s_) * 1e6));
  }
  last_s_ = now;
}

double quantile(std::vector<float> v, double p) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::clamp(
      std::ceil(p * static_cast<double>(v.size())) - 1, 0.0, static_cast<double>(v.size() - 1)));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

std::string ExchangeCost::summary() const {
  if (samples_.empty()) return "no exchange cost measured (fewer than 2 exchanges)";
  const double mean =
      std::accumulate(samples_.begin(), samples_.end(), 0.0) / static_cast<double>(samples_.size());
  return fmt::format(
      "step-thread CPU per lockstep exchange (physics, every system and the bridge; not the "
      "autopilot): p50 {:.1f} us, p99 {:.1f} us, mean {:.1f} us over {} exchanges",
      quantile(samples_, 0.5), quantile(samples_, 0.99), mean, samples_.size());
}

}  // namespace kestrel::sitl
