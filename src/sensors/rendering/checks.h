#pragma once
// Loud checks of rendering sensors at their initial pose (configure: `kestrel check` and run).

#include <ignition/math/Pose3.hh>
#include <string>
#include <vector>

#include "kestrel/render/scene.h"
#include "sensors/camera/camera.h"
#include "sensors/lidar/lidar.h"

namespace kestrel::sensors {

/// Warns when <lens><intrinsics> disagree with horizontal_fov and the image size.
void warn_if_intrinsics_disagree(const CameraParams& p, const char* kind, const std::string& name);

/// Warns when every ray of a camera misses ("sees nothing from its pose"), and for a depth
/// camera when its clip range excludes everything it sees. Casts a 32x24 grid of its rays.
void warn_if_blind_camera(const render::Scene& scene, const CameraParams& p,
                          const std::vector<float>& rays, const ignition::math::Pose3d& X_WS,
                          bool depth, const char* kind, const std::string& name);

/// Warns when no ray of a lidar meets a surface within its range.
void warn_if_blind_lidar(const render::Scene& scene, const LidarParams& p,
                         const std::vector<float>& rays, const ignition::math::Pose3d& X_WS,
                         const std::string& where, const std::string& type,
                         const std::string& name);

}  // namespace kestrel::sensors
