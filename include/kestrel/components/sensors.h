#pragma once
/// @file Sensor outputs: one reading component per sensor type, on the sensor entity.
///
/// Every sensor entity (components::Sensor, created by the SDF loader under its link, or under
/// its joint for force_torque) is given by its sensor system, at configure:
/// - `SensorTopic`: the resolved topic (its <topic>, or Gazebo's default scoped topic
///   `/world/W/model/M/link/L/sensor/S/<suffix>`, nested models adding `/model/N`);
/// - its reading component, rewritten at the sensor's update_rate in sim time.
///
/// Consumers (transport, SITL bridges, controllers) read the reading and compare `sequence`
/// with the last one they saw: it grows by one per new sample (0 = no sample yet). `stamp` is
/// the sim time of the physics state the sample was computed from (the time at the END of the
/// step that produced it).
///
/// When samples are taken: the sensor systems run in the Update phase at priority
/// kPostPhysicsSensors (-32, after Physics at -64), so a reading is complete before PostUpdate
/// (where transport publishes it) in the same step. Sample n (n = 1, 2, ...) is taken at the
/// first state time t >= n / update_rate, computed from n in integer nanoseconds (no drift);
/// update_rate 0 means every step.
///
/// Frames: "sensor frame" is the sensor's own frame (its <pose> in the link), FLU-style as SDF
/// defines (x forward, y left, z up for a level sensor). World frame is ENU. SI units.
///
/// Injected faults (SensorFault, at the end of this file) act on every reading here, in the
/// sensor systems' common update (src/sensors/common/sensor_system.h).

#include <cstdint>
#include <ignition/math/Quaternion.hh>
#include <ignition/math/Vector3.hh>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/time.h"
#include "kestrel/ecs/entity.h"

namespace kestrel::components {

/// The topic a sensor's reading is published on (resolved, never empty, never a placeholder).
struct SensorTopic {
  std::string topic;
};

/// IMU sample (SDF type "imu"; ignition::msgs::IMU).
struct ImuReading {
  Duration stamp{0};           ///< sim time of the state sampled [ns]
  std::uint64_t sequence = 0;  ///< +1 per sample; 0 = none yet
  /// Orientation of the sensor frame relative to the orientation reference frame
  /// (<orientation_reference_frame><localization>: ENU default, NED, NWU, CUSTOM): q_RS, such
  /// that v_R = q_RS * v_S. Identity when has_orientation is false.
  ignition::math::Quaterniond orientation;
  bool has_orientation = true;  ///< SDF <enable_orientation>
  /// Angular velocity of the sensor relative to the world, expressed in the sensor frame
  /// (w_WS_S) [rad/s], noise included.
  ignition::math::Vector3d angular_velocity;
  /// Specific force at the sensor origin, expressed in the sensor frame [m/s²]: R_SW·(a_WS − g),
  /// a_WS including the lever arm (α×r + ω×(ω×r)); at rest and level it reads (0, 0, +g).
  /// Noise included.
  ignition::math::Vector3d linear_acceleration;
  /// Per-axis white-noise variance (stddev²) of the two vectors [(rad/s)², (m/s²)²].
  ignition::math::Vector3d angular_velocity_variance;
  ignition::math::Vector3d linear_acceleration_variance;
};

/// Magnetometer sample (SDF type "magnetometer"; ignition::msgs::Magnetometer).
struct MagnetometerReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  /// Magnetic flux density expressed in the sensor frame [T] (R_SW · B_W), noise included.
  ignition::math::Vector3d field;
  ignition::math::Vector3d variance;  ///< per-axis noise variance [T²]
};

/// Barometer sample (SDF type "air_pressure"; ignition::msgs::FluidPressure).
struct AirPressureReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  double pressure = 0;  ///< static air pressure at the sensor [Pa], noise included
  double variance = 0;  ///< noise variance [Pa²]
};

/// Altimeter sample (SDF type "altimeter"; ignition::msgs::Altimeter).
struct AltimeterReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  double vertical_position = 0;   ///< world z of the sensor minus vertical_reference [m], noisy
  double vertical_velocity = 0;   ///< world-frame up velocity of the sensor origin [m/s], noisy
  double vertical_reference = 0;  ///< world z of the sensor when the run started [m]
  double vertical_position_variance = 0;  ///< variance of the vertical_position noise [m²]
};

/// GNSS sample (SDF type "navsat" or "gps"; ignition::msgs::NavSat).
struct NavSatReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  /// The receiver has a fix. False during a GNSS loss (SensorFault::no_fix): samples go on at
  /// the sensor's rate, but latitude, longitude, altitude and velocity are NaN; transport
  /// publishes nothing for them and the PX4 bridge sends HIL_GPS with fix_type 0.
  bool fix = true;
  double latitude_deg = 0;   ///< WGS84 geodetic latitude [deg], noise applied in metres first
  double longitude_deg = 0;  ///< WGS84 longitude [deg]
  double altitude = 0;       ///< height above the WGS84 ellipsoid [m]
  /// Velocity of the sensor origin, east/north/up components (ENU at the world origin) [m/s].
  ignition::math::Vector3d velocity_enu;
  /// Position of the sensor in the world frame used for this sample (noise-free) [m], ENU.
  ignition::math::Vector3d true_position_world;
};

/// Pitot-static airspeed sample (SDF type "air_speed", on the sensor; PX4's px4::AirSpeed plugin
/// writes one on its link, src/systems/px4_airspeed; the PX4 bridge sends either as diff_pressure).
struct AirSpeedReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  /// Differential (dynamic) pressure ½·ρ·u·|u| [Pa], u = the air-relative velocity along the
  /// sensor's x axis (negative when the air comes from behind), noise included.
  double diff_pressure = 0;
  double temperature = 0;  ///< static air temperature at the sensor [K]
  double density = 0;      ///< air density at the sensor [kg/m³]
  double variance = 0;     ///< pressure noise variance [Pa²]
};

/// Frame a ForceTorqueReading is expressed in (SDF <force_torque><frame>).
enum class WrenchFrame : std::uint8_t { kChild, kParent, kSensor };

/// Force-torque sample (SDF type "force_torque", on a joint; ignition::msgs::Wrench).
struct ForceTorqueReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  /// Force [N] and torque about the joint origin [N·m], the wrench the child exerts on the parent
  /// (measure_direction child_to_parent, default) or the parent on the child (parent_to_child),
  /// expressed in `frame`'s orientation. Noise included.
  ignition::math::Vector3d force;
  ignition::math::Vector3d torque;
  WrenchFrame frame = WrenchFrame::kChild;
};

/// One touching pair seen by a contact sensor.
struct SensedContact {
  ecs::Entity collision = ecs::kNullEntity;         ///< the sensor's own collision
  ecs::Entity other = ecs::kNullEntity;             ///< the collision it touches
  std::string collision_name;                       ///< scoped ("world::model::link::collision")
  std::string other_name;                           ///< scoped
  std::vector<ignition::math::Vector3d> positions;  ///< contact points, world frame [m]
  /// Unit normals, world frame, pointing from `other` into `collision`.
  std::vector<ignition::math::Vector3d> normals;
  std::vector<double> depths;                    ///< penetration depth per point [m]
  std::vector<ignition::math::Vector3d> forces;  ///< force ON `collision` per point, world [N]
};

/// A pair that started or stopped touching since the previous sample.
struct ContactEvent {
  ecs::Entity collision = ecs::kNullEntity;
  ecs::Entity other = ecs::kNullEntity;
  std::string collision_name, other_name;  ///< scoped
};

/// Contact sensor sample (SDF type "contact"; ignition::msgs::Contacts). Rewritten at every
/// sample, empty when nothing touches, with forces from the solver.
struct ContactReading {
  Duration stamp{0};
  std::uint64_t sequence = 0;
  std::vector<SensedContact> contacts;  ///< current touching pairs, in a deterministic order
  std::vector<ContactEvent> began;      ///< pairs touching now that were not at the last sample
  std::vector<ContactEvent> ended;      ///< pairs touching at the last sample, not now
};

// ---- injected faults (on the sensor entity) ---------------------------------------------------

/// An injected sensor fault, on a sensor entity; written by the FaultInjection system
/// (src/systems/fault_injection/README.md). Every sensor system applies it in one place, the
/// update shared by all of them (src/sensors/common/sensor_system.h), to each sample its
/// schedule takes:
/// - `stopped`: the sample is computed and discarded. The reading keeps its last values, stamp
///   and `sequence`, so transport publishes nothing and the SITL bridges send nothing new.
/// - `no_fix` (GNSS loss; navsat/gps only): samples go on with NavSatReading::fix false.
/// - `noise_scale`: multiplies the contribution of every noise standard deviation of the sensor
///   (white noise, the constant bias's random part, the Gauss-Markov bias), not the means.
/// - `bias`: added after noise to the quantity sensor_fault_target(type)->bias names, in the
///   sensor's frame and units; a one-number bias is in x (y and z are 0).
/// A fault never changes which random numbers a sensor draws (a stopped sensor's noise streams
/// advance as if it ran): once it ends, the readings are bit-identical to those of the same run
/// without it. Only `sequence`, which counts the samples published, stays behind.
/// A fault applied at sim time t acts on the samples stamped after t; one that ends at t + d
/// acts on those stamped up to t + d.
struct SensorFault {
  bool stopped = false;
  bool no_fix = false;
  double noise_scale = 1.0;       ///< >= 0
  ignition::math::Vector3d bias;  ///< sensor frame and units (see SensorFaultTarget)
};

/// What a SensorFault can act on, for one sensor type. FaultInjection refuses, at configure, a
/// fault a sensor cannot take (naming the fault's FILE:LINE); the sensor systems apply the bias
/// to exactly this quantity.
struct SensorFaultTarget {
  std::string_view type;  ///< SDF <sensor type>
  int bias_size;          ///< numbers a bias takes: 3 ("x y z"), 1, or 0 (no bias)
  std::string_view bias;  ///< what the bias is added to, with its frame and unit
  bool noise;             ///< the type has SDF <noise> a noise scale can act on
};

inline constexpr SensorFaultTarget kSensorFaultTargets[] = {
    {"imu", 3, "linear_acceleration, sensor frame [m/s²]", true},
    {"magnetometer", 3, "field, sensor frame [T]", true},
    {"air_pressure", 1, "pressure [Pa]", true},
    {"altimeter", 1, "vertical_position [m]", true},
    {"navsat", 3,
     "position east, north, up [m] (local ENU at the world origin, the frame of its noise), "
     "before the conversion to latitude, longitude and altitude",
     true},
    {"gps", 3,
     "position east, north, up [m] (local ENU at the world origin, the frame of its noise), "
     "before the conversion to latitude, longitude and altitude",
     true},
    {"air_speed", 1, "diff_pressure [Pa]", true},
    {"force_torque", 3, "force, in the reading's frame [N]", true},
    {"contact", 0, "", false},
    // The rendering sensors (components/camera.h): stop and noise, no bias.
    {"camera", 0, "", true},
    {"depth_camera", 0, "", true},
    {"depth", 0, "", true},
    {"rgbd_camera", 0, "", true},
    {"rgbd", 0, "", true},
    {"segmentation", 0, "", false},
    {"segmentation_camera", 0, "", false},
    {"boundingbox_camera", 0, "", false},
    {"boundingbox", 0, "", false},
    {"thermal_camera", 0, "", true},
    {"thermal", 0, "", true},
    {"gpu_lidar", 0, "", true},
    {"gpu_ray", 0, "", true},
    {"lidar", 0, "", true},
    {"ray", 0, "", true},
    {"cpu_lidar", 0, "", true},
    {"logical_camera", 0, "", false},
};

/// The fault target of a sensor type, or nullptr for a type no Kestrel sensor system serves.
constexpr const SensorFaultTarget* sensor_fault_target(std::string_view type) {
  for (const auto& t : kSensorFaultTargets) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

}  // namespace kestrel::components
