#pragma once
// Test support for the joint systems: equivalents of gz-sim's test worlds (test/worlds/
// joint_position_controller.sdf, joint_controller.sdf, apply_joint_force.sdf: a 120 kg base
// lying on the ground with a rotor on a revolute joint j1 about z), written for Kestrel, and a
// system that runs a callback in PreUpdate after the systems under test.

#include <functional>
#include <limits>
#include <string>

#include "kestrel/system.h"

namespace kestrel::systems::testing {

/// gz-sim's test model: base_link (120 kg, 0.5×0.5×0.01 box) at z 0.005 on the ground, rotor
/// (0.6 kg, izz 0.00012, 0.25×0.25×0.05 box) 1 m above it on revolute `joint` (axis z, joint
/// origin 0.5 m below the rotor). `plugin` goes inside the model.
inline std::string gz_rotor_model(const std::string& name, const std::string& joint,
                                  const std::string& plugin, double x = 0) {
  return R"(<model name=")" + name + R"("><pose>)" + std::to_string(x) + R"( 0 0.005 0 0 0</pose>
    <link name="base_link">
      <inertial><mass>120</mass><inertia><ixx>2.501</ixx><iyy>2.501</iyy><izz>5</izz></inertia></inertial>
      <collision name="base_collision"><geometry><box><size>0.5 0.5 0.01</size></box></geometry></collision>
    </link>
    <link name="rotor"><pose>0 0 1 0 0 0</pose>
      <inertial><mass>0.6</mass><inertia><ixx>0.032</ixx><iyy>0.032</iyy><izz>0.00012</izz></inertia></inertial>
      <collision name="collision"><geometry><box><size>0.25 0.25 0.05</size></box></geometry></collision>
    </link>
    <joint name=")" +
         joint + R"(" type="revolute"><pose>0 0 -0.5 0 0 0</pose>
      <parent>base_link</parent><child>rotor</child><axis><xyz>0 0 1</xyz></axis>
    </joint>)" +
         plugin + "</model>";
}

/// A world named "w" with 1 ms steps, a ground plane and `models`.
inline std::string gz_world(const std::string& models) {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name="w">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <model name="ground_plane"><static>true</static><link name="link">
      <collision name="collision"><geometry><plane><normal>0 0 1</normal></plane></geometry></collision>
    </link></model>)" +
         models + "</world></sdf>";
}

/// A world named `world` with 1 ms steps and no gravity: model "arm", a rotor link (1 kg,
/// 0.1 kg·m² about each axis) on revolute joint "j" about z to the world, `plugin` inside the
/// model.
inline std::string rotor_on_world(const std::string& plugin, const std::string& world = "w") {
  return R"(<?xml version="1.0"?><sdf version="1.9"><world name=")" + world + R"(">
    <physics type="ode"><max_step_size>0.001</max_step_size></physics>
    <gravity>0 0 0</gravity>
    <model name="arm"><link name="rotor">
      <inertial><mass>1</mass><inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz></inertia></inertial>
    </link>
    <joint name="j" type="revolute"><parent>world</parent><child>rotor</child>
      <axis><xyz>0 0 1</xyz></axis></joint>)" +
         plugin + "</model></world></sdf>";
}

/// Runs `fn` in PreUpdate after every other system's PreUpdate (before Physics steps).
class PreUpdateProbe final : public System, public ISystemPreUpdate {
 public:
  explicit PreUpdateProbe(std::function<void(const UpdateInfo&, ecs::Registry&)> fn)
      : fn_(std::move(fn)) {}
  int priority() const override { return std::numeric_limits<int>::max(); }
  void pre_update(const UpdateInfo& info, ecs::Registry& r) override { fn_(info, r); }

 private:
  std::function<void(const UpdateInfo&, ecs::Registry&)> fn_;
};

}  // namespace kestrel::systems::testing

#include "kestrel/components/messages.h"
#include "testing/quad_world.h"

namespace kestrel::systems::testing {

/// The `i`-th Double input of the model that owns `joint` (in the order its plugins added them).
inline components::DoubleInput& double_input(LoadedWorld& w, const std::string& joint,
                                             std::size_t i = 0) {
  return w.r().get<components::TopicInputs>(w.r().parent(w.find(joint))).real.at(i);
}

/// A Double command as transport writes it at a step boundary (src/transport/bridges.cc).
inline void send_double(LoadedWorld& w, const std::string& joint, double value, std::size_t i = 0) {
  auto& in = double_input(w, joint, i);
  in.value = value;
  ++in.count;
}

}  // namespace kestrel::systems::testing
