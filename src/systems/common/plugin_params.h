#pragma once
// Helpers shared by the behaviour systems for reading <plugin> parameters loudly.

#include <ignition/math/Vector3.hh>
#include <string>
#include <string_view>
#include <vector>

#include "kestrel/core/element.h"
#include "kestrel/ecs/registry.h"

namespace kestrel::systems {

/// Throws Error (at the first unknown child's file:line) if `config` has children that no getter
/// read, except namespaced ones (`gz:system_priority`, `kestrel:...`). `system` names the system
/// in the message, `known` lists the accepted parameters.
void reject_unknown_parameters(const Element& config, std::string_view system,
                               std::string_view known);

/// Required double that must be finite and > 0 (or >= 0 if allow_zero).
double get_positive(const Element& config, std::string_view name, bool allow_zero = false);
/// Optional double (fallback when absent) that must be finite and > 0 (or >= 0).
double get_positive_or(const Element& config, std::string_view name, double fallback,
                       bool allow_zero = false);
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

/// Stable 64-bit FNV-1a hash (seeds per-entity random streams).
std::uint64_t fnv1a(std::string_view s);

/// The link `name` directly under `model`, or Error at config's location listing the links.
ecs::Entity find_link(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                      const Element& config, std::string_view parameter);
/// The joint `name` under `model` ("j", "model::j" or "model/j"), or Error listing the joints.
ecs::Entity find_joint(const ecs::Registry& r, ecs::Entity model, std::string_view name,
                       const Element& config, std::string_view parameter);

}  // namespace kestrel::systems
