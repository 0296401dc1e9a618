#pragma once
// What lockstep exchanges cost Kestrel, as a distribution: the step thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID) from one completed exchange to the next — every system of the
// exchange's steps, physics and the bridge included, and the kernel's work for the thread's
// socket calls; not the time it spends blocked waiting for the autopilot, and not the
// autopilot's CPU. One clock read per exchange, so measuring costs almost nothing.

#include <cstdint>
#include <string>
#include <vector>

namespace kestrel::sitl {

class ExchangeCost {
 public:
  /// An exchange completed (the autopilot's answer arrived), on the step thread.
  void exchange();
  /// "step-thread CPU per exchange: p50 … us, p99 … us, mean … us over N exchanges".
  std::string summary() const;
  /// The per-exchange figures so far [µs] (the first exchange has none: no start).
  const std::vector<float>& samples_us() const { return samples_; }

 private:
  double last_s_ = -1;  // thread CPU time at the previous exchange [s]
  std::vector<float> samples_;
};

/// The p-quantile (0..1, nearest rank) of `v` (copied); 0 when empty.
double quantile(std::vector<float> v, double p);

}  // namespace kestrel::sitl
