#pragma once
/// @file Factories of Kestrel's sensor systems (listed in src/world/builtin.cc).
///
/// Each system is attached to the world (Gazebo: a world <plugin>), serves every sensor entity
/// of its SDF type(s), writes the reading components of components/sensors.h at each sensor's
/// update_rate in sim time, and reads the sensor's parameters from its SDF element with loud
/// getters (an unknown parameter is an Error). Parameters are listed in src/sensors/<name>/
/// README.md. Noise streams are derived from components::WorldSeed and the scoped name.

#include <memory>

#include "kestrel/system.h"

namespace kestrel::sensors {

std::unique_ptr<System> make_imu_system();           ///< "imu" → ImuReading
std::unique_ptr<System> make_magnetometer_system();  ///< "magnetometer" → MagnetometerReading
std::unique_ptr<System> make_air_pressure_system();  ///< "air_pressure" → AirPressureReading
std::unique_ptr<System> make_altimeter_system();     ///< "altimeter" → AltimeterReading
std::unique_ptr<System> make_navsat_system();        ///< "navsat", "gps" → NavSatReading
std::unique_ptr<System> make_air_speed_system();     ///< "air_speed" → AirSpeedReading
std::unique_ptr<System> make_force_torque_system();  ///< "force_torque" → ForceTorqueReading
std::unique_ptr<System> make_contact_system();       ///< "contact" → ContactReading
/// Gazebo's rendering `Sensors` system: "camera", "depth_camera", "rgbd_camera",
/// "segmentation", "boundingbox_camera", "thermal_camera" → CameraReading; "gpu_lidar", "gpu_ray" →
/// LidarReading (ray cast into the visuals).
std::unique_ptr<System> make_rendering_system();
/// "lidar", "ray", "cpu_lidar" → LidarReading (ray cast into the collisions).
std::unique_ptr<System> make_cpu_lidar_system();
/// Gazebo's Label system: the SemanticLabel of a visual (or of a model's visuals).
std::unique_ptr<System> make_label_system();
/// Gazebo's Thermal system: the Temperature of a visual (src/sensors/thermal/README.md).
std::unique_ptr<System> make_thermal_system();
/// Gazebo's ThermalSensor system: a thermal camera's resolution and temperature range.
std::unique_ptr<System> make_thermal_sensor_system();
/// "logical_camera" → LogicalCameraReading.
std::unique_ptr<System> make_logical_camera_system();

}  // namespace kestrel::sensors
