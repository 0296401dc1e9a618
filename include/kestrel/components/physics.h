#pragma once
/// @file Physics state and command components (Gazebo's names where Gazebo has one).
///
/// State components are written by the Physics system after every step for every link and
/// joint it simulates (no opt-in); the Physics system adds them when it builds its model.
/// One exception, JointTransmittedWrench, costs an extra pass over the tree per step and is
/// filled only where it exists (see its comment).
/// Command components are written by other systems (usually in PreUpdate) and consumed by
/// Physics in Update. Lifetimes of commands:
/// - accumulate, applied once, then zeroed by Physics: ExternalWorldWrenchCmd, JointForceCmd;
/// - held every step while the component exists (remove it to release): JointVelocityCmd,
///   LinearVelocityCmd, AngularVelocityCmd;
/// - applied once, then removed by Physics: WorldPoseCmd, JointPositionReset,
///   JointVelocityReset.
///
/// Frames: "world" is ENU; "body" is the link frame (FLU for vehicles). Drake-style names in
/// comments: v_WL_W is the velocity of the link origin Lo in world W, expressed in W.

#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <vector>

#include "kestrel/ecs/entity.h"

namespace kestrel::components {

// ---- link state (written by Physics every step) ------------------------------------------------

/// Linear velocity of the link origin relative to the world, expressed in the link frame
/// (R_LW · v_WL_W) [m/s].
struct LinearVelocity {
  ignition::math::Vector3d value;
};

/// Angular velocity of the link relative to the world, expressed in the link frame (w_WL_L)
/// [rad/s].
struct AngularVelocity {
  ignition::math::Vector3d value;
};

/// Linear velocity of the link origin relative to the world, expressed in the world frame
/// (v_WL_W) [m/s].
struct WorldLinearVelocity {
  ignition::math::Vector3d value;
};

/// Angular velocity of the link relative to the world, expressed in the world frame (w_WL_W)
/// [rad/s].
struct WorldAngularVelocity {
  ignition::math::Vector3d value;
};

/// Acceleration of the link origin relative to the (inertial) world, expressed in the link
/// frame [m/s²]. Kinematic acceleration, gravity NOT removed: a body at rest on the ground
/// reads 0, a body in free fall reads g. (An IMU's specific force is this minus R_LW·g.)
/// Mean over the last step: (v(t+dt) − v(t)) / dt, see src/physics/README.md.
struct LinearAcceleration {
  ignition::math::Vector3d value;
};

/// As LinearAcceleration, expressed in the world frame [m/s²].
struct WorldLinearAcceleration {
  ignition::math::Vector3d value;
};

/// Angular acceleration of the link relative to the world, expressed in the link frame
/// [rad/s²]. Mean over the last step (finite difference of the world angular velocity).
struct AngularAcceleration {
  ignition::math::Vector3d value;
};

/// As AngularAcceleration, expressed in the world frame [rad/s²].
struct WorldAngularAcceleration {
  ignition::math::Vector3d value;
};

// ---- joint state (written by Physics every step) -----------------------------------------------

/// Joint coordinates, one per axis [rad for revolute/continuous, m for prismatic]; universal:
/// {axis1, axis2}; ball: the child-relative-to-parent quaternion {w, x, y, z}; fixed: empty.
/// Zero is the configuration the joint had when its model was loaded.
struct JointPosition {
  std::vector<double> data;
};

/// Joint rates, one per axis [rad/s or m/s]; ball: angular velocity of the child relative to
/// the parent, expressed in the child link frame {x, y, z} [rad/s]; fixed: empty.
struct JointVelocity {
  std::vector<double> data;
};

/// Generalized force exerted along each joint axis by its command, spring, damper and Coulomb
/// friction in the last step [N·m or N] (MuJoCo qfrc_applied + qfrc_passive + joint friction
/// loss; excludes limit and contact reactions, which are in JointTransmittedWrench).
struct JointForce {
  std::vector<double> data;
};

/// Wrench the parent side exerts on the child link through the joint, at the joint origin,
/// expressed in the joint frame (as Gazebo's JointTransmittedWrench): force [N], torque [N·m].
/// On request: Physics fills it after every step on every simulated joint that HAS this
/// component, and computes it (MuJoCo's mj_rnePostConstraint) only while at least one entity
/// has one. Physics adds it itself to joints that declare a `force_torque` sensor; any other
/// reader adds it to the joint (e.g. in configure; filled from the next step) and may remove it
/// to stop paying for it. A joint without it has no wrench, never a stale zero.
struct JointTransmittedWrench {
  ignition::math::Vector3d force;
  ignition::math::Vector3d torque;
};

// ---- contacts (written by Physics every step on every collision, empty when not touching) -------

/// One contact point of a collision with another collision.
struct ContactPoint {
  ecs::Entity other = ecs::kNullEntity;  ///< the other collision entity
  ignition::math::Vector3d position;     ///< contact point in the world frame [m]
  ignition::math::Vector3d normal;       ///< unit normal, world frame, pointing from the other
                                         ///< collision into this one (the push direction)
  double depth = 0;                      ///< penetration depth [m], > 0 when overlapping
  ignition::math::Vector3d force;        ///< force exerted ON this collision by the other, world
                                         ///< frame [N] (normal + friction)
};

/// All contacts of a collision found in the last step (Gazebo's ContactSensorData, as data).
/// Present on every collision simulated by Physics; empty when nothing touches it.
struct Contacts {
  std::vector<ContactPoint> points;
};

// ---- commands
// ------------------------------------------------------------------------------------

/// Wrench applied to a link in the world frame at the link origin: force [N] and torque [N·m]
/// (torque about the link origin). Systems ADD to it within a step (thrust, drag, wind);
/// Physics applies the sum for one step, then zeroes it.
struct ExternalWorldWrenchCmd {
  ignition::math::Vector3d force;   ///< world frame [N]
  ignition::math::Vector3d torque;  ///< world frame, about the link origin [N·m]
};

/// Generalized force per joint axis for one step [N·m or N], clamped to the axis effort limit;
/// zeroed by Physics after the step.
struct JointForceCmd {
  std::vector<double> data;
};

/// Joint velocity per axis [rad/s or m/s], held through every step while the component exists
/// by a servo exerting at most the axis effort limit (clamped to the axis velocity limit; not
/// applied to a joint that has a JointForceCmd, as in Gazebo). Remove it to release.
struct JointVelocityCmd {
  std::vector<double> data;
};

/// Sets the joint position per axis once [rad or m], then Physics removes the component.
struct JointPositionReset {
  std::vector<double> data;
};

/// Sets the joint velocity per axis once [rad/s or m/s], then Physics removes the component.
struct JointVelocityReset {
  std::vector<double> data;
};

/// Teleports a model (or a free link) once: its frame's new pose in the world frame (X_WM);
/// velocities are kept. Physics removes the component after applying it.
struct WorldPoseCmd {
  ignition::math::Pose3d value;
};

/// Linear velocity of the model's (or free link's) origin, expressed in that entity's own
/// frame [m/s], imposed before every step while the component exists.
struct LinearVelocityCmd {
  ignition::math::Vector3d value;
};

/// Angular velocity of a model (or free link), expressed in that entity's own frame [rad/s],
/// imposed before every step while the component exists.
struct AngularVelocityCmd {
  ignition::math::Vector3d value;
};

/// On a collision: the force-dependent slip of its contacts along their first and second
/// friction directions [m/s/N] (components::Surface says which directions), in place of its
/// surface's <slip1>/<slip2>, held every step while the component exists (Gazebo's
/// SlipComplianceCmd, which WheelSlip writes).
struct SlipComplianceCmd {
  double slip1 = 0.0;  ///< along the first direction [m/s/N]
  double slip2 = 0.0;  ///< along the second direction [m/s/N]
};

/// On a collision: the friction coefficients of its contacts along their first and second
/// direction, in place of the smaller of the two surfaces' (gz-sim main's WheelSlip sets a
/// contact's coefficients so), held every step while the component exists. Written by
/// LookupWheelSlip.
struct ContactFrictionCmd {
  double mu = 1.0;   ///< along the first direction
  double mu2 = 1.0;  ///< along the second direction
};

}  // namespace kestrel::components
