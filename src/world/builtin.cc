// The one explicit list of systems compiled into Kestrel. Add a system here (one line) when it
// exists; keep the order stable (it is the order `kestrel check` lists them in).

#include "kestrel/world/builtin.h"

#include "kestrel/physics/physics.h"
#include "kestrel/record/log_record.h"
#include "kestrel/sensors/sensors.h"
#include "kestrel/sitl/sitl.h"
#include "kestrel/transport/transport.h"
#include "systems/ackermann_steering/ackermann_steering.h"
#include "systems/advanced_lift_drag/advanced_lift_drag.h"
#include "systems/apply_joint_force/apply_joint_force.h"
#include "systems/apply_link_wrench/apply_link_wrench.h"
#include "systems/buoyancy/buoyancy.h"
#include "systems/buoyancy_engine/buoyancy_engine.h"
#include "systems/detachable_joint/detachable_joint.h"
#include "systems/diff_drive/diff_drive.h"
#include "systems/fixed_wing_control/fixed_wing_control.h"
#include "systems/generic_motor_model/generic_motor_model.h"
#include "systems/hydrodynamics/hydrodynamics.h"
#include "systems/joint_controller/joint_controller.h"
#include "systems/joint_position_controller/joint_position_controller.h"
#include "systems/joint_state_publisher/joint_state_publisher.h"
#include "systems/joint_trajectory_controller/joint_trajectory_controller.h"
#include "systems/kinetic_energy_monitor/kinetic_energy_monitor.h"
#include "systems/lift_drag/lift_drag.h"
#include "systems/lighter_than_air_dynamics/lighter_than_air_dynamics.h"
#include "systems/lookup_wheel_slip/lookup_wheel_slip.h"
#include "systems/mecanum_drive/mecanum_drive.h"
#include "systems/motor_failure/motor_failure.h"
#include "systems/moving_platform_controller/moving_platform_controller.h"
#include "systems/multicopter_control/multicopter_control.h"
#include "systems/multicopter_motor_model/multicopter_motor_model.h"
#include "systems/odometry_publisher/odometry_publisher.h"
#include "systems/parachute/parachute.h"
#include "systems/pose_publisher/pose_publisher.h"
#include "systems/px4_airspeed/px4_airspeed.h"
#include "systems/spacecraft_thruster_model/spacecraft_thruster_model.h"
#include "systems/thruster/thruster.h"
#include "systems/touch_plugin/touch_plugin.h"
#include "systems/track_controller/track_controller.h"
#include "systems/tracked_vehicle/tracked_vehicle.h"
#include "systems/trajectory_follower/trajectory_follower.h"
#include "systems/velocity_control/velocity_control.h"
#include "systems/wheel_slip/wheel_slip.h"
#include "systems/wind_effects/wind_effects.h"

namespace kestrel::world {

std::span<const BuiltinSystem> builtin_systems() {
  static const BuiltinSystem kSystems[] = {
      // name       factory                          default  serves sensors
      {"Physics", &physics::make_physics_system, true, ""},
      {"Imu", &sensors::make_imu_system, false, "imu"},
      {"Magnetometer", &sensors::make_magnetometer_system, false, "magnetometer"},
      {"AirPressure", &sensors::make_air_pressure_system, false, "air_pressure"},
      {"Altimeter", &sensors::make_altimeter_system, false, "altimeter"},
      {"NavSat", &sensors::make_navsat_system, false, "navsat gps"},
      {"AirSpeed", &sensors::make_air_speed_system, false, "air_speed"},
      {"ForceTorque", &sensors::make_force_torque_system, false, "force_torque"},
      {"Contact", &sensors::make_contact_system, false, "contact"},
      {"Sensors", &sensors::make_rendering_system, false,
       "camera depth_camera depth rgbd_camera rgbd segmentation segmentation_camera gpu_lidar "
       "gpu_ray boundingbox_camera boundingbox thermal_camera thermal"},
      {"CpuLidar", &sensors::make_cpu_lidar_system, false, "lidar ray cpu_lidar"},
      {"LogicalCamera", &sensors::make_logical_camera_system, false, "logical_camera"},
      {"Label", &sensors::make_label_system, false, ""},
      {"Thermal", &sensors::make_thermal_system, false, ""},
      {"ThermalSensor", &sensors::make_thermal_sensor_system, false, ""},
      {"WindEffects", &systems::make_wind_effects_system, false, ""},
      {"UserCommands", &transport::make_user_commands_system, true, ""},
      {"SceneBroadcaster", &transport::make_scene_broadcaster_system, true, ""},
      {"MulticopterMotorModel", &systems::make_multicopter_motor_model, false, ""},
      {"MulticopterVelocityControl", &systems::make_multicopter_velocity_control, false, ""},
      {"MulticopterMission", &systems::make_multicopter_mission, false, ""},
      {"LinearBatteryPlugin", &systems::make_linear_battery, false, ""},
      {"FaultInjection", &systems::make_fault_injection, false, ""},
      {"MotorFailureSystem", &systems::make_motor_failure, false, ""},
      {"Px4Bridge", &sitl::make_px4_bridge_system, false, ""},
      {"ArduPilotBridge", &sitl::make_ardupilot_bridge_system, false, ""},
      {"RflySimBridge", &sitl::make_rflysim_bridge_system, false, ""},
      {"DiffDrive", &systems::make_diff_drive, false, ""},
      {"OdometryPublisher", &systems::make_odometry_publisher, false, ""},
      {"PosePublisher", &systems::make_pose_publisher, false, ""},
      {"AckermannSteering", &systems::make_ackermann_steering, false, ""},
      {"MecanumDrive", &systems::make_mecanum_drive, false, ""},
      {"VelocityControl", &systems::make_velocity_control, false, ""},
      {"TrajectoryFollower", &systems::make_trajectory_follower, false, ""},
      {"TrackController", &systems::make_track_controller, false, ""},
      {"TrackedVehicle", &systems::make_tracked_vehicle, false, ""},
      {"WheelSlip", &systems::make_wheel_slip, false, ""},
      {"LookupWheelSlip", &systems::make_lookup_wheel_slip, false, ""},
      {"JointPositionController", &systems::make_joint_position_controller, false, ""},
      {"JointController", &systems::make_joint_controller, false, ""},
      {"JointTrajectoryController", &systems::make_joint_trajectory_controller, false, ""},
      {"JointStatePublisher", &systems::make_joint_state_publisher, false, ""},
      {"ApplyJointForce", &systems::make_apply_joint_force, false, ""},
      {"ApplyLinkWrench", &systems::make_apply_link_wrench, false, ""},
      {"KineticEnergyMonitor", &systems::make_kinetic_energy_monitor, false, ""},
      {"TouchPlugin", &systems::make_touch_plugin, false, ""},
      {"DetachableJoint", &systems::make_detachable_joint, false, ""},
      {"TriggeredPublisher", &transport::make_triggered_publisher_system, false, ""},
      {"LiftDrag", &systems::make_lift_drag, false, ""},
      {"AdvancedLiftDrag", &systems::make_advanced_lift_drag, false, ""},
      {"Buoyancy", &systems::make_buoyancy, false, ""},
      {"Hydrodynamics", &systems::make_hydrodynamics, false, ""},
      {"Thruster", &systems::make_thruster, false, ""},
      {"GenericMotorModel", &systems::make_generic_motor_model, false, ""},
      {"ParachuteSystem", &systems::make_parachute, false, ""},
      {"Px4AirSpeed", &systems::make_px4_airspeed, false, ""},
      {"MovingPlatformController", &systems::make_moving_platform_controller, false, ""},
      {"BuoyancyEngine", &systems::make_buoyancy_engine, false, ""},
      {"SpacecraftThrusterModel", &systems::make_spacecraft_thruster_model, false, ""},
      {"LighterThanAirDynamics", &systems::make_lighter_than_air_dynamics, false, ""},
      {"FixedWingControl", &systems::make_fixed_wing_control, false, ""},
      {"FixedWingMission", &systems::make_fixed_wing_mission, false, ""},
      {"LogRecord", &record::make_log_record_system, false, ""},
  };
  return kSystems;
}

}  // namespace kestrel::world
