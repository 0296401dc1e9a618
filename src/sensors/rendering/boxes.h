#pragma once
// The boxes of a boundingbox_camera from one rendered frame (the object seen by each pixel),
// as gz-rendering's bounding box camera computes them (src/sensors/rendering/README.md).

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <vector>

#include "kestrel/components/camera.h"
#include "kestrel/ecs/registry.h"
#include "kestrel/render/camera.h"
#include "kestrel/render/scene.h"

namespace kestrel::sensors {

enum class BoxType : std::uint8_t { kVisible2D, kFull2D, k3D };

struct BoxFrame {
  const render::Scene& scene;
  const ecs::Registry& r;
  const render::CameraModel& model;
  const ignition::math::Pose3d& X_WC;      ///< world pose of the camera frame (x ahead)
  const std::vector<std::uint32_t>& seen;  ///< object per pixel (render::CameraOutputs::object)
};

/// Boxes of the labelled models seen (a visual with a label 0..254; 255 and unlabelled visuals
/// are background: they hide what is behind them but have no box), one per top-level model,
/// in gz-rendering's order (model names, descending).
std::vector<components::Box2D> boxes_2d(const BoxFrame& f, BoxType type);
std::vector<components::Box3D> boxes_3d(const BoxFrame& f);

/// Draws the boxes in green on an RGB image (gz-rendering's DrawBoundingBox).
void draw_boxes(const std::vector<components::Box2D>& boxes, std::uint32_t w, std::uint32_t h,
                std::uint8_t* rgb);
void draw_boxes(const std::vector<components::Box3D>& boxes, const render::CameraModel& m,
                std::uint8_t* rgb);

/// Ogre's rotation-matrix-to-quaternion conversion (the sign of the quaternion gz-rendering's
/// 3D boxes carry). Row-major 3×3.
ignition::math::Quaterniond quaternion_like_ogre(const double R[9]);

}  // namespace kestrel::sensors
