#pragma once
// Helpers shared by the behaviour systems for reading <plugin> parameters loudly.

#include <ignition/math/Vector3.hh>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/element.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::systems {

/// Throws Error (at the first unknown child's file:line) if `config` has children that no getter
/// read, except namespaced ones (`gz:system_priority`, `kestrel:...`). `system` names the system
/// in the message, `known` lists the accepted parameters. Parameters take no attributes: an
/// attribute on a child is an error too, except on the children named in `own_attributes`, whose
/// attributes the system checks itself (Element::reject_unknown_attributes).
void reject_unknown_parameters(const Element& config, std::string_view system,
                               std::string_view known,
                               std::initializer_list<std::string_view> own_attributes = {});

/// Required double that must be finite and > 0 (or >= 0 if allow_zero).
double get_positive(const Element& config, std::string_view name, bool allow_zero = false);
/// Optional double (fallback when absent) that must be finite and > 0 (or >= 0).
double get_positive_or(const Element& config, std::string_view name, double fallback,
                       bool allow_zero = false);
/// Optional double that must be finite (fallback when absent). @throws Error at its line.
double get_finite_or(const Element& config, std::string_view name, double fallback);
/// Required double that must be finite. @throws Error at the plugin's line if absent.
double get_finite(const Element& config, std::string_view name);
/// Optional vector with finite components. @throws Error at its line.
ignition::math::Vector3d get_finite_vector_or(const Element& config, std::string_view name,
                                              const ignition::math::Vector3d& fallback);
/// Optional Vector3d with every component finite and >= 0.
ignition::math::Vector3d get_nonnegative_vector_or(const Element& config, std::string_view name,
                                                   const ignition::math::Vector3d& fallback);

/// "/" + ns + "/" + topic with duplicate slashes collapsed and no trailing slash
/// ("X3", "gazebo/command/motor_speed" → "/X3/gazebo/command/motor_speed"). A topic that
/// starts with '/' is absolute and keeps no namespace.
std::string resolve_topic(std::string_view ns, std::string_view topic);

/// An attribute of `e` parsed as a double. @throws Error at e's file:line if missing (and
/// required) or malformed.
double attribute_double(const Element& e, std::string_view key);
double attribute_double_or(const Element& e, std::string_view key, double fallback);
ignition::math::Vector3d attribute_vector(const Element& e, std::string_view key);
std::string attribute_string(const Element& e, std::string_view key);

/// What the multicopter plugins of one model have declared, kept on the model entity (a registry
/// component private to src/systems) so that plugins configured later can cross-check them.
struct ModelPlugins {
  /// By actuator number: the MulticopterMotorModel's <plugin> FILE:LINE and joint ("" = none).
  std::vector<std::string> motor_where, motor_joint;
  /// By actuator number: the joint a MulticopterVelocityControl's <rotor> allocates for (its
  /// rotorConfiguration order; empty = no controller declared yet) and its FILE:LINE.
  std::vector<std::string> commanded_joints;
  std::string commander_where;
  /// Plugins of which the model may hold one: (key, <plugin> FILE:LINE).
  std::vector<std::pair<std::string, std::string>> unique;
};

/// The model's ModelPlugins (added when absent).
ModelPlugins& model_plugins(ecs::Registry& r, ecs::Entity model);

/// Records that `config` declares `what` (e.g. "MulticopterMission", "LinearBattery with
/// battery_name 'b'") on `model`. @throws Error at config's FILE:LINE naming the first
/// declaration's FILE:LINE if `what` is already declared there.
void claim_unique_plugin(ecs::Registry& r, ecs::Entity model, const std::string& what,
                         const Element& config);

/// The Error for a motor whose actuator number is outside the `count` commands the model gets
/// (`source` says where the commands come from), at the motor's <plugin> FILE:LINE.
Error actuator_out_of_range(const std::string& motor_where, std::string_view model, int actuator,
                            std::size_t count, std::string_view source);

/// Checks the motor with `actuator` (on joint `motor_joint`, <plugin> at `motor_where`) against
/// the model's velocity controller, if one is declared: the actuator must be one it commands,
/// and the controller's <rotor> of that index must be the motor's joint. @throws Error at the
/// motor's FILE:LINE otherwise.
void check_motor_against_controller(const ModelPlugins& plugins, std::string_view model,
                                    std::size_t actuator, const std::string& motor_joint,
                                    const std::string& motor_where);

/// Stable 64-bit FNV-1a hash (seeds per-entity random streams).
std::uint64_t fnv1a(std::string_view s);

/// The link `name` directly under `model`, or Error at config's location listing the links.
ecs::Entity find_link(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                      const Element& config, std::string_view parameter);
/// The joint `name` under `model` ("j", "model::j" or "model/j"), or Error listing the joints.
ecs::Entity find_joint(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                       const Element& config, std::string_view parameter);

}  // namespace kestrel::systems
