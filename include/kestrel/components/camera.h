#pragma once
/// @file Outputs of the rendering sensors (cameras, depth cameras, lidars, logical cameras) and
/// the world's render settings. Written by the sensor systems of src/sensors/{rendering,lidar,
/// logical_camera} at each sensor's update_rate (see components/sensors.h for `stamp` and
/// `sequence`), published by src/transport with ignition-msgs 8 (Image, CameraInfo,
/// PointCloudPacked, LaserScan, LogicalCameraImage).
///
/// Camera frame (Gazebo's): x forward (the optical axis), y left, z up. Image rows go from the
/// top, columns from the left. SI units.

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <string>
#include <vector>

#include "kestrel/core/time.h"

namespace kestrel::components {

/// What the renderer reads of a <light> besides components::Light (on the light entity, from
/// the loader).
struct LightShading {
  double intensity = 1;         ///< <intensity>: scales diffuse and specular
  double spot_inner_angle = 0;  ///< <spot><inner_angle> [rad], full light inside
  double spot_outer_angle = 0;  ///< <spot><outer_angle> [rad], no light outside
  double spot_falloff = 0;      ///< <spot><falloff>: exponent between the two angles
};

/// Semantic label of a visual (0..255), set by the Label system (Gazebo's
/// gz::sim::systems::Label); read by segmentation cameras. Unlabelled visuals are background.
struct SemanticLabel {
  int value = 0;
};

/// Uniform temperature of a visual [K], set by the Thermal system (Gazebo's
/// gz::sim::systems::Thermal); read by thermal cameras. Visuals without one are not heat sources.
struct Temperature {
  double kelvin = 0;
};

/// A thermal camera's settings from the ThermalSensor system (gz::sim::systems::ThermalSensor),
/// on the sensor entity; read by the Sensors system at its configure.
struct ThermalCameraSettings {
  double resolution = 0;              ///< <resolution> [K per unit]; 0: not given
  bool has_range = false;             ///< <min_temp> or <max_temp> given
  double min_temp = 0, max_temp = 0;  ///< [K]
};

/// Rendering settings of a world, on the world entity (set by `kestrel run` before configure).
struct RenderSettings {
  bool enabled = true;   ///< false: `kestrel run --no-render`, rendering sensors produce nothing
  unsigned threads = 0;  ///< render threads including the step thread (0: one per core)
};

/// Pixel layouts, as ignition::msgs::PixelFormatType names them.
enum class PixelFormat : std::uint8_t {
  kRgbInt8,   ///< RGB_INT8: 3 bytes per pixel
  kLInt8,     ///< L_INT8: 1 byte
  kLInt16,    ///< L_INT16: 2 bytes, little endian
  kRFloat32,  ///< R_FLOAT32: 4-byte float, little endian (depth [m])
};
inline std::uint32_t bytes_per_pixel(PixelFormat f) {
  return f == PixelFormat::kRgbInt8  ? 3
         : f == PixelFormat::kLInt8  ? 1
         : f == PixelFormat::kLInt16 ? 2
                                     : 4;
}

/// One image: row-major from the top-left pixel, rows of width · bytes_per_pixel bytes.
struct Image {
  std::uint32_t width = 0, height = 0;  ///< [px]
  PixelFormat format = PixelFormat::kRgbInt8;
  std::vector<std::uint8_t> data;
};

/// What camera_info carries (ignition::msgs::CameraInfo): the intrinsics K (fx, fy, cx, cy,
/// skew [px]; pixel (i, j) is centred at (i + 0.5, j + 0.5)), the plumb-bob distortion
/// (k1, k2, p1, p2, k3) and the projection P (= K with tx = ty = 0 for a monocular camera).
struct CameraInfo {
  std::uint32_t width = 0, height = 0;
  double fx = 0, fy = 0, cx = 0, cy = 0, skew = 0;
  double k1 = 0, k2 = 0, k3 = 0, p1 = 0, p2 = 0;
  double projection_fx = 0, projection_fy = 0, projection_cx = 0, projection_cy = 0;
  double tx = 0, ty = 0;  ///< projection translation [px·m]
};

/// An axis-aligned image box (ignition::msgs::AnnotatedAxisAligned2DBox): pixel coordinates,
/// x from the left, y from the top, of the first and last pixel rows/columns (gz-rendering's).
struct Box2D {
  int label = 0;
  double min_x = 0, min_y = 0, max_x = 0, max_y = 0;
};

/// An oriented box (ignition::msgs::AnnotatedOriented3DBox) in gz-rendering's view frame of
/// the camera: x right, y up, z backwards (a point ahead of the camera has z < 0) [m].
struct Box3D {
  int label = 0;
  ignition::math::Vector3d center, size;
  ignition::math::Quaterniond orientation;
};

/// Sample of a camera, depth_camera or rgbd_camera (and segmentation's colour map).
struct CameraReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  std::string frame_id;  ///< header frame_id: <optical_frame_id>, else the sensor's frame
  CameraInfo info;
  Image image;  ///< camera: RGB_INT8/L_INT8/L_INT16; depth_camera: R_FLOAT32 depth; rgbd: RGB
  Image depth;  ///< rgbd_camera: R_FLOAT32 planar depth [m] (+inf far/miss, -inf too near)
  /// segmentation: the labels map (RGB_INT8): semantic (label, label, label); panoptic
  /// (instance % 256, instance / 256, label). `image` is then the coloured map.
  Image labels;
  /// depth and rgbd cameras: one point per pixel in the camera frame [m] (x = depth, y left,
  /// z up; non-finite where the depth is), xyz interleaved, and its colour (R G B) — the image
  /// (rgbd) or the depth as grey (depth_camera, as Gazebo does).
  std::vector<float> points;
  std::vector<std::uint8_t> point_rgb;
  /// boundingbox_camera (2d / visible_2d and full_2d box types): one box per labelled model
  /// seen, corners in pixels. `image` is then the colour image with the boxes drawn in green.
  std::vector<Box2D> boxes_2d;
  std::vector<Box3D> boxes_3d;  ///< boundingbox_camera, box type 3d
};

/// Topics of a camera-type sensor (empty: not published).
struct CameraTopics {
  std::string image, camera_info, depth_image, points, labels_map;
  std::string boxes;      ///< boundingbox_camera: its boxes
  bool boxes_3d = false;  ///< the boxes are 3D (AnnotatedOriented3DBox_V), else 2D
};

/// Sample of a lidar (gpu_lidar, gpu_ray, lidar, ray, cpu_lidar; ignition::msgs::LaserScan).
struct LidarReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  std::string frame_id;
  ignition::math::Pose3d world_pose;                    ///< X_WS of the sensor at the sample
  double angle_min = 0, angle_max = 0, angle_step = 0;  ///< horizontal [rad], inclusive
  std::uint32_t count = 0;                              ///< rays per ring
  double vertical_angle_min = 0, vertical_angle_max = 0, vertical_angle_step = 0;  ///< [rad]
  std::uint32_t vertical_count = 1;                                                ///< rings
  double range_min = 0, range_max = 0;                                             ///< [m]
  /// vertical_count × count ranges [m], ring by ring from the lowest: noise applied, then
  /// clamped to [range_min, range_max]; +inf where nothing was hit, -inf nearer than range_min.
  std::vector<double> ranges;
  std::vector<double> intensities;  ///< same layout (laser retro of the surface hit; 0)
};

/// Topics of a lidar: the LaserScan and its PointCloudPacked (xyz, intensity, ring).
struct LidarTopics {
  std::string scan, points;
};

/// A model a logical camera sees.
struct LogicalCameraModel {
  std::string name;             ///< scoped name without the world ("model" or "m::nested")
  ignition::math::Pose3d pose;  ///< X_SM: model pose in the sensor frame
};

/// Sample of a logical_camera (ignition::msgs::LogicalCameraImage).
struct LogicalCameraReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  std::string frame_id;
  ignition::math::Pose3d pose;             ///< X_WS
  std::vector<LogicalCameraModel> models;  ///< models whose origin lies in the frustum
};

}  // namespace kestrel::components
