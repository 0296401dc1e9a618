#pragma once
/// @file Simulation time: integer nanoseconds, never a float sum.

#include <chrono>
#include <cstdint>

namespace kestrel {

/// A duration or a point in sim time, in integer nanoseconds.
using Duration = std::chrono::duration<std::int64_t, std::nano>;

/// Seconds (double) from a Duration. Use only at the edges (printing, physics engines).
constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) * 1e-9; }

/// Duration from seconds, rounded to the nearest nanosecond.
constexpr Duration from_seconds(double s) {
  return Duration{static_cast<std::int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5))};
}

}  // namespace kestrel
