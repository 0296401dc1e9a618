// U.S. Standard Atmosphere 1976 (identical to ISA below 32 km).

#include <cmath>
#include <string>

#include "kestrel/core/error.h"
#include "kestrel/sensors/environment.h"

namespace kestrel::sensors {
namespace {

constexpr double kG0 = 9.80665;      // standard gravity [m/s²]
constexpr double kM = 0.0289644;     // molar mass of dry air [kg/mol]
constexpr double kR = 8.31432;       // universal gas constant as US-1976 defines it [J/(mol·K)]
constexpr double kR0 = 6356766.0;    // effective Earth radius for geopotential altitude [m]

// Layers above the troposphere: base geopotential altitude [m] and lapse rate [K/m].
struct Layer {
  double base, lapse;
};
constexpr Layer kLayers[] = {{11000, 0.0},     {20000, 0.001},  {32000, 0.0028},
                             {47000, 0.0},     {51000, -0.0028}, {71000, -0.002},
                             {84852, 0.0}};

// Pressure after climbing from (T0, p0) by dh [m] with lapse L [K/m]; T1 = T0 + L dh.
double climb(double T0, double p0, double L, double dh) {
  if (L == 0.0) return p0 * std::exp(-kG0 * kM * dh / (kR * T0));
  return p0 * std::pow((T0 + L * dh) / T0, -kG0 * kM / (kR * L));
}

}  // namespace

AirState standard_atmosphere(double altitude_m, const components::Atmosphere& sea_level) {
  if (!(altitude_m >= -5000.0 && altitude_m <= 86000.0)) {
    throw Error("standard atmosphere: altitude " + std::to_string(altitude_m) +
                " m is outside the model's range [-5000, 86000] m");
  }
  const double H = kR0 * altitude_m / (kR0 + altitude_m);  // geopotential altitude [m]
  // dT/dH per layer [K/m]; the troposphere's is SDF's temperature_gradient (-0.0065 ISA).
  double T = sea_level.temperature, p = sea_level.pressure;
  double base = 0.0, lapse = sea_level.temperature_gradient;
  for (const Layer& layer : kLayers) {
    if (H <= layer.base) break;
    p = climb(T, p, lapse, layer.base - base);
    T += lapse * (layer.base - base);
    base = layer.base;
    lapse = layer.lapse;
  }
  AirState s;
  s.pressure = climb(T, p, lapse, H - base);
  s.temperature = T + lapse * (H - base);
  s.density = s.pressure * kM / (kR * s.temperature);
  return s;
}

}  // namespace kestrel::sensors
