#pragma once
/// @file Entity ids and the components the registry itself understands (name and parent).

#include <cstdint>
#include <string>
#include <string_view>

namespace kestrel::ecs {

/// A 64-bit entity id. Ids start at 1, grow by one per created entity and are never reused
/// within a run (a Registry never hands out the same id twice, even after removal or restore).
using Entity = std::uint64_t;

/// The null entity: "no entity". Never returned by Registry::create.
inline constexpr Entity kNullEntity = 0;

/// Change state of a component within the current step, as Gazebo's ComponentState.
/// kPeriodic marks values that change every step (poses, velocities): consumers may sample them.
/// kOneTime marks changes that must not be missed (a teleport, a parameter change).
enum class ComponentState : std::uint8_t { kNoChange = 0, kPeriodic = 1, kOneTime = 2 };

/// The compile-time name of a type, e.g. "kestrel::components::Pose". Used in error messages;
/// not stable across compilers (serialization uses ComponentSerializer<T>::kName instead).
template <class T>
constexpr std::string_view type_name() {
  std::string_view p = __PRETTY_FUNCTION__;
  const auto start = p.find("T = ") + 4;
  const auto end = p.find_first_of(";]", start);
  return p.substr(start, end - start);
}

}  // namespace kestrel::ecs

namespace kestrel::components {

/// The entity's name, unique among its siblings (SDF `name` attribute).
struct Name {
  std::string value;
};

/// The entity's parent in the entity graph. Maintained by the Registry: set it with
/// Registry::create(parent) or Registry::set_parent, never with add/replace/remove.
struct ParentEntity {
  ecs::Entity value = ecs::kNullEntity;
};

}  // namespace kestrel::components
