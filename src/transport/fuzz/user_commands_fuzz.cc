// libFuzzer target for UserCommands' request handlers (transport/user_commands.h): the first
// byte picks the request (create, create_multiple, remove, set_pose, set_pose_vector), the rest
// is its protobuf bytes. Each parsed request is carried out on a small running world as a
// service would carry it out; then the world steps. A crash, an AddressSanitizer report, or a
// world whose next steps fail after a request — accepted or refused — is a bug: a request that
// would make physics fail must be refused and leave the world as it was.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "kestrel/physics/physics.h"
#include "kestrel/sdf/world_loader.h"
#include "kestrel/sim/runner.h"
#include "transport/user_commands.h"

namespace {

using namespace kestrel;
namespace msgs = ignition::msgs;

constexpr const char* kWorld = R"(<?xml version="1.0"?>
<sdf version="1.9"><world name="fw">
  <model name="ground"><static>true</static><link name="link">
    <collision name="c"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
  </link></model>
  <model name="box"><pose>0 0 0.5 0 0 0</pose><link name="body">
    <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
  </link></model>
</world></sdf>)";

struct World {
  World() {
    runner = std::make_unique<sim::Runner>(sim::Runner::Options{});
    sdf::load_world_string(kWorld, runner->registry(), runner->world());
    runner->add_system(physics::make_physics_system(), runner->world(), nullptr, "Physics", "fuzz");
    runner->configure();
    handlers = transport::detail::make_user_command_handlers(runner->world(),
                                                             std::chrono::milliseconds(2000));
  }
  std::unique_ptr<sim::Runner> runner;
  std::unique_ptr<transport::detail::UserCommandHandlers> handlers;
};

template <class Req>
bool parse(const std::uint8_t* data, std::size_t size, Req& req) {
  return req.ParseFromArray(data, static_cast<int>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static World w;  // one world; reset before every input (spawned models and systems go)
  if (size < 1) return 0;
  w.runner->reset_now();
  const std::uint8_t kind = data[0] % 5;
  ++data;
  --size;
  transport::detail::StepWork work;
  try {
    switch (kind) {
      case 0: {
        msgs::EntityFactory q;
        if (!parse(data, size, q)) return 0;
        work = w.handlers->create(q);
        break;
      }
      case 1: {
        msgs::EntityFactory_V q;
        if (!parse(data, size, q) || q.data_size() > 8) return 0;  // bounded work per input
        work = w.handlers->create_multiple(q);
        break;
      }
      case 2: {
        msgs::Entity q;
        if (!parse(data, size, q)) return 0;
        work = w.handlers->remove(q);
        break;
      }
      case 3: {
        msgs::Pose q;
        if (!parse(data, size, q)) return 0;
        work = w.handlers->set_pose(q);
        break;
      }
      default: {
        msgs::Pose_V q;
        if (!parse(data, size, q)) return 0;
        work = w.handlers->set_pose_vector(q);
        break;
      }
    }
    work(*w.runner);  // at a step boundary, as the step thread runs it
  } catch (const transport::detail::Rejected&) {
    // refused: the world must be as it was
  } catch (const Error&) {
    // refused by the loader or a system: the same
  } catch (const std::exception&) {
    // what a library threw (libsdformat's std::stoi did): the service boundary answers it false
    // with its text, and the world must be as it was all the same
  }
  // Accepted or refused, the world steps on.
  try {
    for (int i = 0; i < 3; ++i) w.runner->step_once();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the world failed after a request (kind %d): %s\n", kind, e.what());
    __builtin_trap();
  }
  return 0;
}
