#pragma once
/// @file A link's fluid added mass (SDF's `<inertial><fluid_added_mass>`, which gz-sim's
/// Physics adds to the link's spatial inertia): written by the SDF loader, read by Physics
/// (src/physics/README.md) and by LighterThanAirDynamics for its Munk terms.

#include <array>

namespace kestrel::components {

/// The 6×6 symmetric added mass matrix of a link, about the link frame's origin in link axes,
/// in SDF's order: rows and columns x, y, z (linear) then p, q, r (angular); `m[6 * i + j]`
/// [kg, kg·m, kg·m²]. SDF gives the upper triangle (xx, xy, … rr); the lower mirrors it.
struct FluidAddedMass {
  std::array<double, 36> m{};
  double operator()(int i, int j) const { return m[6 * i + j]; }
};

}  // namespace kestrel::components
