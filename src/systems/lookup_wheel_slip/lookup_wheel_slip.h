#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// gz-sim's `gz-sim-lookup-wheel-slip-system` / LookupWheelSlip. See README.md.
std::unique_ptr<System> make_lookup_wheel_slip();

}  // namespace kestrel::systems
