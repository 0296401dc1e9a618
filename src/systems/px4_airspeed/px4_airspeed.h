#pragma once
#include <memory>

#include "kestrel/system.h"

namespace kestrel::systems {

/// PX4's Gazebo plugin `AirSpeed` (`px4::AirSpeed`, libAirSpeedPlugin.so, the advanced_plane's):
/// the differential pressure of the link's air-relative velocity along its x axis, written as
/// a components::AirSpeedReading on the link for the PX4 bridge. See README.md.
std::unique_ptr<System> make_px4_airspeed();

}  // namespace kestrel::systems
