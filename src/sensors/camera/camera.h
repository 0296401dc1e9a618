#pragma once
// SDF <camera> of the camera-type sensors (camera, depth_camera, rgbd_camera): intrinsics,
// clip, image format, noise, distortion, topics, as gz-sensors reads them.

#include <string>

#include "kestrel/components/camera.h"
#include "kestrel/core/element.h"
#include "kestrel/render/camera.h"
#include "sensors/noise/noise.h"

namespace kestrel::sensors {

struct CameraParams {
  render::CameraModel model;      ///< what is rendered (intrinsics, distortion, clip)
  double horizontal_fov = 1.047;  ///< <horizontal_fov> [rad]
  components::PixelFormat format = components::PixelFormat::kRgbInt8;
  bool has_intrinsics = false;    ///< <lens><intrinsics> given (else from horizontal_fov)
  components::CameraInfo info;    ///< camera_info as published
  NoiseParams noise;              ///< <noise>: gaussian on [0, 1] colour, or [m] of depth
  std::string optical_frame_id;   ///< <optical_frame_id> (empty: the sensor frame)
  std::string camera_info_topic;  ///< <camera_info_topic> (empty: Gazebo's default)
  std::string where;              ///< file:line of <camera> (or of <sensor> without one)
};

/// Reads <camera> (nullptr: every default). `depth` is true for depth_camera and rgbd_camera
/// (their <depth_camera><clip> overrides <clip> for depth; the image format is R_FLOAT32).
/// @throws Error (file:line) on unknown or unsupported elements and out-of-range values.
CameraParams parse_camera(const Element* camera, const std::string& sensor_where, bool depth);

/// fx = fy = (W/2)/tan(hfov/2), cx = W/2, cy = H/2: the intrinsics gz-rendering derives from
/// horizontal_fov and the image size (vertical fov from the aspect ratio).
void default_intrinsics(double hfov, std::uint32_t w, std::uint32_t h, double& fx, double& fy,
                        double& cx, double& cy);

/// Gazebo's default camera_info topic of an image topic: its parent path + "/camera_info"
/// ("/a/b/image" → "/a/b/camera_info"; "camera" → "/camera_info").
std::string camera_info_topic(const std::string& image_topic);

}  // namespace kestrel::sensors
