#pragma once
/// @file Messages a system exchanges with the outside world through topics, as plain data:
/// what it subscribes (TopicInputs) and what it publishes (TopicOutputs). Transport
/// (src/transport/bridges.cc) subscribes and
/// publishes them with Gazebo's message types (ignition-msgs 8), so a system never includes
/// transport and a test can drive a system by writing its inputs.
///
/// Both live on the entity the system is attached to (usually its model). Several systems on
/// one entity each add their own entries at configure and keep the entries' indices (entries
/// are never removed; the vectors only grow while systems configure), so two plugins on one
/// model may each have a cmd_vel topic.
///
/// Inputs: transport writes every message it receives on an entry's topic into that entry at
/// the next step boundary (before PreUpdate) and increments its `count`: a system sees a new
/// message as a changed count. Messages that arrive between two boundaries: the latest wins
/// (the others are counted as dropped in the world statistics).
///
/// Outputs: a system fills an entry (usually in Update, after Physics) and increments its
/// `sequence`; transport publishes the entry in that step's PostUpdate when its sequence
/// differs from the last one it published (a reset, which rewinds sequences, publishes again).
///
/// Frames: world ENU; body FLU. Units SI. Stamps are sim time (Gazebo's header stamp).

#include <cstdint>
#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector3.hh>
#include <string>
#include <vector>

#include "kestrel/core/time.h"

namespace kestrel::components {

// ---- in ---------------------------------------------------------------------------------------

/// ignition.msgs.Twist received on `topic`.
struct TwistInput {
  std::string topic;
  ignition::math::Vector3d linear;   ///< [m/s], as sent (the system says in which frame)
  ignition::math::Vector3d angular;  ///< [rad/s]
  std::uint64_t count = 0;           ///< messages applied so far
};

/// ignition.msgs.Boolean received on `topic`.
struct BoolInput {
  std::string topic;
  bool value = false;
  std::uint64_t count = 0;
};

/// ignition.msgs.Double received on `topic`.
struct DoubleInput {
  std::string topic;
  double value = 0;
  std::uint64_t count = 0;
};

/// ignition.msgs.Int32 received on `topic`.
struct Int32Input {
  std::string topic;
  std::int32_t value = 0;
  std::uint64_t count = 0;
};
/// ignition.msgs.Vector3d received on `topic`.
struct Vector3Input {
  std::string topic;
  ignition::math::Vector3d value;
  std::uint64_t count = 0;
};

/// ignition.msgs.Actuators received on `topic` (PX4's and Gazebo's actuator commands).
struct ActuatorsInput {
  std::string topic;
  std::vector<double> position, velocity, normalized;  ///< as sent
  std::uint64_t count = 0;
};

/// A message that carries nothing but its arrival on `topic`: ignition.msgs.Empty, or with
/// `any_type` a message of any type (Gazebo's DetachableJoint attach topic).
struct EventInput {
  std::string topic;
  bool any_type = false;
  std::uint64_t count = 0;
};

/// An entity named in a message (ignition.msgs.Entity): by `id`, else by scoped `name` and
/// `type` (ignition.msgs.Entity.Type: 1 LIGHT, 2 MODEL, 3 LINK, 4 VISUAL, 5 COLLISION, 6 SENSOR,
/// 7 JOINT).
struct EntityRef {
  std::uint64_t id = 0;
  std::string name;
  int type = 0;
};

/// An ignition.msgs.EntityWrench: a wrench for an entity.
struct EntityWrench {
  EntityRef entity;
  ignition::math::Vector3d force, torque;       ///< [N, N·m], world frame
  bool has_entity = false, has_wrench = false;  ///< the message carried them
  bool has_force_offset = false;                ///< wrench.force_offset was set
};

/// Every ignition.msgs.EntityWrench received on `topic`, in arrival order: unlike the inputs
/// above none is replaced by a newer one (each is a command). Transport appends at the step
/// boundary (`count` + 1 each); the system takes them (empties `received`).
struct EntityWrenchInput {
  std::string topic;
  std::vector<EntityWrench> received;
  std::uint64_t count = 0;
};

/// Every ignition.msgs.Entity received on `topic`, in arrival order (as EntityWrenchInput).
struct EntityInput {
  std::string topic;
  std::vector<EntityRef> received;
  std::uint64_t count = 0;
};

/// The topics the systems attached to an entity subscribe (see the file comment).
struct TopicInputs {
  std::vector<TwistInput> twist;
  std::vector<BoolInput> boolean;
  std::vector<DoubleInput> real;
  std::vector<Vector3Input> vector3;
  std::vector<Int32Input> int32;
  std::vector<ActuatorsInput> actuators;
  std::vector<EventInput> event;
  /// One-way services (request ignition.msgs.Boolean, no response) named `topic`: each
  /// request is written like a message (TouchPlugin's `enable`).
  std::vector<BoolInput> boolean_service;
  std::vector<EntityWrenchInput> entity_wrench;
  std::vector<EntityInput> entity;
};

// ---- out --------------------------------------------------------------------------------------

/// An odometry estimate published as Gazebo's odometry systems do: ignition.msgs.Odometry on
/// `topic` and the same pose as a one-pose ignition.msgs.Pose_V on `tf_topic` (with the same
/// header). An empty topic is not published. (Gazebo's OdometryPublisher also sends an
/// OdometryWithCovariance, a message ignition-msgs 8.2 does not have.)
struct OdometryOutput {
  std::string topic, tf_topic;
  Duration stamp{0};                         ///< header stamp (sim time)
  std::string frame_id;                      ///< header data "frame_id"
  std::string child_frame_id;                ///< header data "child_frame_id"; empty: not sent
  ignition::math::Pose3d pose;               ///< of child_frame_id in frame_id [m, rad]
  ignition::math::Vector3d linear, angular;  ///< twist [m/s, rad/s], in child_frame_id
  std::uint64_t sequence = 0;
};

/// Poses published as Gazebo's PosePublisher does: every item as its own ignition.msgs.Pose on
/// `topic` (in order), or all of them in one ignition.msgs.Pose_V when `vector`.
struct PosesOutput {
  struct Item {
    std::string name;             ///< Pose.name (Gazebo: the child frame)
    std::string frame_id;         ///< header data "frame_id" (the parent frame; may be empty)
    std::string child_frame_id;   ///< header data "child_frame_id"
    ignition::math::Pose3d pose;  ///< of child_frame_id relative to frame_id
  };
  std::string topic;
  bool vector = false;
  Duration stamp{0};  ///< every header's stamp (sim time)
  std::vector<Item> items;
  std::uint64_t sequence = 0;
};

/// ignition.msgs.Double on `topic`.
struct DoubleOutput {
  std::string topic;
  double value = 0;
  std::uint64_t sequence = 0;
};

/// ignition.msgs.Boolean on `topic`.
struct BoolOutput {
  std::string topic;
  bool value = false;
  std::uint64_t sequence = 0;
};

/// ignition.msgs.StringMsg on `topic` (an event output, advertised when its entry appears).
struct StringOutput {
  std::string topic;
  std::string value;
  std::uint64_t sequence = 0;
};

/// A model's joint state as Gazebo's JointStatePublisher sends it: ignition.msgs.Model with
/// the model's name, id and pose and one ignition.msgs.Joint per entry.
struct JointStateOutput {
  struct Axis {
    double position = 0, velocity = 0, force = 0;  ///< [rad or m, rad/s or m/s, N·m or N]
  };
  struct Joint {
    std::string name;
    std::uint64_t id = 0;         ///< entity id
    ignition::math::Pose3d pose;  ///< the joint's pose (relative to its child link)
    std::string parent, child;    ///< link names
    /// axis1: the first axis; its xyz, limits and damping (only with `has_axis1_info`).
    Axis axis1;
    bool has_axis1 = false, has_axis1_info = false;
    ignition::math::Vector3d xyz;
    double lower = 0, upper = 0, damping = 0;
    Axis axis2;  ///< the second axis, when `has_axis2`
    bool has_axis2 = false;
  };
  std::string topic;
  Duration stamp{0};  ///< header stamp (sim time)
  std::string name;   ///< the model's name
  std::uint64_t id = 0;
  ignition::math::Pose3d pose;  ///< the model's pose (relative to its parent)
  std::vector<Joint> joints;
  std::uint64_t sequence = 0;
};

/// What the systems attached to an entity publish (see the file comment).
struct TopicOutputs {
  std::vector<OdometryOutput> odometry;
  std::vector<PosesOutput> poses;
  std::vector<DoubleOutput> real;
  std::vector<BoolOutput> boolean;
  std::vector<JointStateOutput> joint_state;
  std::vector<StringOutput> string;
};

}  // namespace kestrel::components
