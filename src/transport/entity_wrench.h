#pragma once
// ignition.msgs.EntityWrench (header 1, entity 2, wrench 3), which Debian's ignition-msgs 8.2
// does not ship while Gazebo's ApplyLinkWrench speaks it: the message type is built at run time
// from the two messages msgs 8.2 does ship (protobuf's DescriptorPool + DynamicMessageFactory),
// so it is parsed and serialized by protobuf itself, with Gazebo's type name.
#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/wrench.pb.h>

#include <optional>
#include <string>

namespace kestrel::transport::detail {

inline constexpr const char* kEntityWrenchType = "ignition.msgs.EntityWrench";

struct EntityWrenchMsg {
  std::optional<ignition::msgs::Entity> entity;  ///< absent: the message carried none
  std::optional<ignition::msgs::Wrench> wrench;
};

/// The message in `data` (serialized EntityWrench), or nullopt if it is not one.
std::optional<EntityWrenchMsg> parse_entity_wrench(const std::string& data);

/// Serialized EntityWrench with the fields given.
std::string serialize_entity_wrench(const EntityWrenchMsg& m);

}  // namespace kestrel::transport::detail
