#pragma once
/// @file Components describing models, links, joints, collisions, visuals, lights and sensors,
/// as loaded from SDF. Poses follow Drake's naming in comments: X_PC is the pose of frame C in
/// frame P. Unless a field says otherwise, lengths are in m, angles in rad, masses in kg.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <ignition/math/Inertial.hh>
#include <ignition/math/Pose3.hh>
#include <ignition/math/Vector2.hh>
#include <ignition/math/Vector3.hh>

#include "kestrel/core/element.h"
#include "kestrel/ecs/entity.h"

namespace kestrel::components {

// ---- what an entity is (markers) -----------------------------------------------------------

struct Model {};
struct Link {};
struct Joint {};
struct Collision {};
struct Visual {};
struct Frame {};  ///< an SDF <frame> (explicit frame), with Pose relative to its parent entity

/// Pose of the entity relative to its parent entity (X_PE): model in world (or parent model),
/// link in model, joint/collision/visual/sensor in link. Resolved from SDF `relative_to` at load.
struct Pose {
  ignition::math::Pose3d value;
};

/// Pose of the entity in the world frame (X_WE). Set at load; kept current by physics for links.
struct WorldPose {
  ignition::math::Pose3d value;
};

/// The largest world coordinate Kestrel accepts for a pose given by a user (a world file, a
/// spawn, set_pose) [m]: 1e9 m, ten times below MuJoCo 2.2's bound of 1e10 on any position,
/// beyond which it declares the simulation unstable; at 1e9 m a double still resolves ~0.1 µm.
inline constexpr double kMaxWorldCoordinate = 1e9;

/// Where an entity came from in the user's files, for error messages ("world.sdf:42").
struct SourceLocation {
  std::string file;
  int line = 0;
};

// ---- models ----------------------------------------------------------------------------------

struct Static {
  bool value = false;  ///< SDF <static>: the model never moves
};
struct SelfCollide {
  bool value = false;  ///< SDF <self_collide>: links of this model collide with each other
                       ///< (on a link: that link's own setting, overriding its model's)
};

// ---- links -----------------------------------------------------------------------------------

/// Mass properties (SDF <inertial>): mass [kg], pose of the inertial frame in the link frame
/// (X_LI: centre of mass and principal-axes orientation) and the inertia matrix about the
/// centre of mass, expressed in the inertial frame [kg·m²].
struct Inertial {
  ignition::math::Inertiald value;
  bool explicit_in_sdf = true;  ///< false when SDF had no <inertial> (loader reports it)
};

struct LinkGravity {
  bool value = true;  ///< SDF link <gravity>: gravity acts on this link
};
struct Kinematic {
  bool value = false;  ///< SDF <kinematic>: moved by commands only, not by forces
};
struct EnableWind {
  bool value = false;  ///< SDF <enable_wind>: the WindEffects system pushes this link
};

// ---- geometry, collisions, visuals ---------------------------------------------------------------

struct BoxShape {
  ignition::math::Vector3d size;  ///< full edge lengths x y z [m]
};
struct SphereShape {
  double radius = 0;
};
struct CylinderShape {
  double radius = 0;
  double length = 0;  ///< along the shape's z axis
};
struct CapsuleShape {
  double radius = 0;
  double length = 0;  ///< of the cylindrical part, along z
};
struct EllipsoidShape {
  ignition::math::Vector3d radii;
};
struct PlaneShape {
  ignition::math::Vector3d normal{0, 0, 1};
  ignition::math::Vector2d size{1, 1};  ///< visual extent only; the collision plane is infinite
};
struct MeshShape {
  std::string uri;    ///< as written in SDF
  std::string path;   ///< resolved absolute path; empty if it could not be resolved
  ignition::math::Vector3d scale{1, 1, 1};
  std::string submesh;
};
struct HeightmapShape {
  std::string uri;
  std::string path;
  ignition::math::Vector3d size{1, 1, 1};
  ignition::math::Vector3d pos;
};

/// The shape of a collision or visual, in its own frame (Pose of the collision/visual).
struct Geometry {
  std::variant<std::monostate, BoxShape, SphereShape, CylinderShape, CapsuleShape,
               EllipsoidShape, PlaneShape, MeshShape, HeightmapShape>
      shape;
};

/// Contact surface of a collision (SDF <surface>). Absent values keep SDF's defaults.
/// Friction has two directions in a contact's plane, as in ODE and DART: the first along
/// `fdir1` projected onto the plane, the second across it (src/physics/README.md, "Friction
/// directions and slip").
struct Surface {
  double mu = 1.0;            ///< Coulomb friction along the first direction (<ode><mu>)
  double mu2 = 1.0;           ///< along the second direction
  /// First friction direction (<ode><fdir1>), unit, in the collision frame or in the frame of
  /// `fdir1_link`; zero when not given (then DART's default: the world's z axis).
  ignition::math::Vector3d fdir1;
  /// The link `fdir1` is expressed in (<fdir1 gz:expressed_in>), or kNullEntity: the collision.
  ecs::Entity fdir1_link = ecs::kNullEntity;
  /// Force-dependent slip along the first and second direction [m/s/N] (<ode><slip1>,
  /// <slip2>): the contact slides at slip × its friction force there. 0: none.
  double slip1 = 0.0, slip2 = 0.0;
  double mu_torsional = 0.0;  ///< torsional friction coefficient (<torsional><coefficient>)
  double patch_radius = 0.0;  ///< torsional patch radius [m]
  double restitution = 0.0;   ///< <bounce><restitution_coefficient>
  std::optional<double> kp;   ///< contact stiffness [N/m] (<contact><ode><kp>)
  std::optional<double> kd;   ///< contact damping [N·s/m] (<contact><ode><kd>)
  std::uint32_t collide_bitmask = 0xffff;  ///< <contact><collide_bitmask>
};

/// Visual material, kept as data for viewers.
struct Material {
  ignition::math::Vector3d ambient, diffuse, specular;  ///< RGB 0..1
  double transparency = 0;
};

// ---- joints ------------------------------------------------------------------------------

enum class JointType : std::uint8_t {
  kFixed, kRevolute, kContinuous, kPrismatic, kBall, kUniversal, kScrew, kRevolute2, kGearbox
};

/// One joint axis (SDF <axis>/<axis2>). Axis expressed in the joint frame after load.
struct JointAxisData {
  ignition::math::Vector3d xyz{0, 0, 1};  ///< unit axis in the joint frame
  double lower = -1e16, upper = 1e16;     ///< position limits [rad or m]
  double effort = -1;                     ///< max force/torque [N or N·m]; <0 = unlimited
  double velocity = -1;                   ///< max speed [rad/s or m/s]; <0 = unlimited
  double damping = 0;                     ///< viscous damping [N·m·s/rad or N·s/m]
  double friction = 0;                    ///< Coulomb friction [N·m or N]
  double spring_reference = 0;            ///< spring zero position [rad or m]
  double spring_stiffness = 0;            ///< [N·m/rad or N/m]
};

/// What a joint connects and how. Parent/child are the link entities (parent kNullEntity =
/// the world). Names are as written in SDF (for messages).
struct JointData {
  JointType type = JointType::kFixed;
  std::string parent_name, child_name;
  ecs::Entity parent = ecs::kNullEntity;
  ecs::Entity child = ecs::kNullEntity;
  JointAxisData axis;
  std::optional<JointAxisData> axis2;  ///< universal, revolute2
  double thread_pitch = 0;             ///< screw joints [m/rev]
};

// ---- sensors and lights (data; sensor systems interpret them) ------------------------------

/// A sensor as declared in SDF. The sensor systems read `element` for type-specific settings
/// (noise blocks included) with Element's loud getters.
struct Sensor {
  std::string type;             ///< SDF type: "imu", "magnetometer", "air_pressure", ...
  double update_rate = 0;       ///< [Hz]; 0 = every step
  std::string topic;            ///< as written; empty = the system's default scoped topic
  bool always_on = false;
  std::shared_ptr<const Element> element;  ///< the whole <sensor> element
};

struct Light {
  std::string type;  ///< point, directional, spot
  bool cast_shadows = false;
  ignition::math::Vector3d diffuse{1, 1, 1}, specular{0.1, 0.1, 0.1};  ///< RGB 0..1
  ignition::math::Vector3d direction{0, 0, -1};  ///< in the light frame
  double range = 10, attenuation_constant = 1, attenuation_linear = 0, attenuation_quadratic = 0;
};

}  // namespace kestrel::components
