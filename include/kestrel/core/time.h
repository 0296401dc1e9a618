#pragma once
/// @file Simulation time: integer nanoseconds, never a float sum.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace kestrel {

/// A duration or a point in sim time, in integer nanoseconds.
using Duration = std::chrono::duration<std::int64_t, std::nano>;

/// Seconds (double) from a Duration. Use only at the edges (printing, physics engines).
constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) * 1e-9; }

/// Duration from seconds, rounded to the nearest nanosecond. @pre |s| < kMaxSeconds (use
/// checked_seconds for values from users).
constexpr Duration from_seconds(double s) {
  return Duration{static_cast<std::int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5))};
}

/// The largest time the clock holds, in seconds: 2^63 - 1 ns, about 292 years.
inline constexpr double kMaxSeconds = 9223372036.854775807;

/// `s` seconds as a Duration when the clock can hold it: finite, |s| below kMaxSeconds, and
/// (when `positive`) at least 1 ns after rounding. nullopt otherwise — never an overflowed or
/// zero value.
inline std::optional<Duration> checked_seconds(double s, bool positive) {
  if (!std::isfinite(s) || std::fabs(s) >= kMaxSeconds) return std::nullopt;
  const Duration d = from_seconds(s);
  if (positive && d <= Duration{0}) return std::nullopt;
  return d;
}

/// What a time limit or step size may be, for messages: "from 1 ns to 9223372036.854775807 s
/// (about 292 years; Kestrel's clock counts integer nanoseconds)".
inline std::string seconds_range(bool positive) {
  return std::string(positive ? "from 1 ns" : "from 0") +
         " to 9223372036.854775807 s (about 292 years; Kestrel's clock counts integer "
         "nanoseconds)";
}

/// The exact decimal seconds of a Duration: "0.03" for 30 ms (not 0.030000000000000002).
inline std::string exact_seconds(Duration t) {
  const std::int64_t ns = t.count();
  const std::uint64_t mag = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : ns;
  std::string frac = std::to_string(mag % 1'000'000'000);
  frac.insert(0, 9 - frac.size(), '0');
  frac.erase(frac.find_last_not_of('0') + 1);
  return (ns < 0 ? "-" : "") + std::to_string(mag / 1'000'000'000) +
         (frac.empty() ? "" : "." + frac);
}

}  // namespace kestrel
