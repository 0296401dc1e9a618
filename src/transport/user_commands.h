#pragma once
// Private to src/transport: what UserCommands does with each request, apart from transport, so
// that the request handlers can be driven without a transport node (the fuzz target
// src/transport/fuzz/user_commands_fuzz.cc).

#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>
#include <ignition/msgs/entity_factory_v.pb.h>
#include <ignition/msgs/pose.pb.h>
#include <ignition/msgs/pose_v.pb.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "kestrel/sim/runner.h"

namespace kestrel::transport::detail {

/// A request that cannot be carried out; `why` is the one log line and the reason.
struct Rejected {
  std::string why;
};

/// Work to carry out on the step thread at a step boundary; throws Rejected to refuse (then the
/// world is as it was).
using StepWork = std::function<void(sim::Runner&)>;

/// The handlers of /world/W/create, create_multiple, remove, set_pose and set_pose_vector. Each
/// runs on the caller's thread (a transport thread: it reads the files a request names, on a
/// helper thread, within `file_timeout`), throws Rejected to refuse, and returns the work for
/// the step thread.
class UserCommandHandlers {
 public:
  virtual ~UserCommandHandlers() = default;
  virtual StepWork create(const ignition::msgs::EntityFactory& request) = 0;
  virtual StepWork create_multiple(const ignition::msgs::EntityFactory_V& request) = 0;
  virtual StepWork remove(const ignition::msgs::Entity& request) = 0;
  virtual StepWork set_pose(const ignition::msgs::Pose& request) = 0;
  virtual StepWork set_pose_vector(const ignition::msgs::Pose_V& request) = 0;
};

/// Handlers for the world entity `world`.
std::unique_ptr<UserCommandHandlers> make_user_command_handlers(
    ecs::Entity world, std::chrono::milliseconds file_timeout);

}  // namespace kestrel::transport::detail
