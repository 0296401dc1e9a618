#pragma once
/// @file A track's moving contact surface (gz-sim's TrackController): written by the system on
/// the track link, read by Physics for every contact of the link's collisions
/// (src/systems/track_controller/README.md).

#include <ignition/math/Quaternion.hh>
#include <ignition/math/Vector3.hh>
#include <limits>

namespace kestrel::components {

/// On a link: its collisions' contact surfaces move as a track belt's. For a contact at p with
/// normal n pointing into the collision (gz-sim flips the engine's normal so that n · (collision
/// position − p) ≥ 0), belt = n × y, y the track frame's y axis in the world (link orientation
/// · `orientation`), negated when `velocity` < 0; the friction direction f is the belt's for a
/// straight drive, n × unit(p − center_of_rotation) (negated when `velocity` < 0) otherwise;
/// the surface then moves relative to the link at sign(belt · f) · |velocity| along unit(f).
struct TrackSurface {
  double velocity = 0;  ///< belt speed after the speed limits [m/s]
  /// World position the track turns about; not finite: a straight drive.
  ignition::math::Vector3d center_of_rotation{std::numeric_limits<double>::infinity(),
                                              std::numeric_limits<double>::infinity(),
                                              std::numeric_limits<double>::infinity()};
  ignition::math::Quaterniond orientation;  ///< track frame in the link frame (+x: the belt)
};

}  // namespace kestrel::components
