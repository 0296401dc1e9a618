#include "testing/quad_world.h"

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "kestrel/core/error.h"
#include "kestrel/core/log.h"

namespace kestrel::systems::testing {

std::string motor_plugin(int i, const std::string& extra, const std::string& ns) {
  // Rotors 0 (front right) and 1 (back left) turn ccw, 2 (front left) and 3 (back right) cw.
  return fmt::format(R"(
      <plugin filename="gz-sim-multicopter-motor-model-system"
              name="gz::sim::systems::MulticopterMotorModel">
        <robotNamespace>{ns}</robotNamespace>
        <jointName>rotor_{i}_joint</jointName>
        <linkName>rotor_{i}</linkName>
        <turningDirection>{dir}</turningDirection>
        <timeConstantUp>0.0125</timeConstantUp>
        <timeConstantDown>0.025</timeConstantDown>
        <maxRotVelocity>800.0</maxRotVelocity>
        <motorConstant>8.54858e-06</motorConstant>
        <momentConstant>0.016</momentConstant>
        <commandSubTopic>command/motor_speed</commandSubTopic>
        <actuator_number>{i}</actuator_number>
        <rotorDragCoefficient>8.06428e-05</rotorDragCoefficient>
        <rollingMomentCoefficient>1e-06</rollingMomentCoefficient>
        <motorSpeedPubTopic>motor_speed/{i}</motorSpeedPubTopic>
        <rotorVelocitySlowdownSim>10</rotorVelocitySlowdownSim>
        <motorType>velocity</motorType>{extra}
      </plugin>)",
                     fmt::arg("ns", ns), fmt::arg("i", i), fmt::arg("dir", i < 2 ? "ccw" : "cw"),
                     fmt::arg("extra", extra));
}

namespace {
constexpr double kRotorXY[4][2] = {{kArm, -kArm}, {-kArm, kArm}, {kArm, kArm}, {-kArm, -kArm}};

std::string rotor_link(int i) {
  return fmt::format(R"(
      <link name="rotor_{i}">
        <pose>{x} {y} 0.023 0 0 0</pose>
        <inertial><mass>0.005</mass>
          <inertia><ixx>9.75e-07</ixx><ixy>0</ixy><ixz>0</ixz><iyy>4.17041e-05</iyy>
                   <iyz>0</iyz><izz>4.26041e-05</izz></inertia></inertial>
        <collision name="collision">
          <geometry><cylinder><length>0.005</length><radius>0.1</radius></cylinder></geometry>
        </collision>
      </link>
      <joint name="rotor_{i}_joint" type="revolute">
        <child>rotor_{i}</child><parent>base_link</parent>
        <axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis>
      </joint>)",
                     fmt::arg("i", i), fmt::arg("x", kRotorXY[i][0]),
                     fmt::arg("y", kRotorXY[i][1]));
}

std::string velocity_control(const std::string& ns) {
  std::string rotors;
  for (int i = 0; i < 4; ++i) {
    rotors += fmt::format(
        "<rotor><jointName>rotor_{}_joint</jointName><forceConstant>8.54858e-06</forceConstant>"
        "<momentConstant>0.016</momentConstant><direction>{}</direction></rotor>\n",
        i, i < 2 ? 1 : -1);
  }
  return fmt::format(R"(
      <plugin filename="gz-sim-multicopter-control-system"
              name="gz::sim::systems::MulticopterVelocityControl">
        <robotNamespace>{}</robotNamespace>
        <commandSubTopic>gazebo/command/twist</commandSubTopic>
        <enableSubTopic>enable</enableSubTopic>
        <comLinkName>base_link</comLinkName>
        <velocityGain>2.7 2.7 2.7</velocityGain>
        <attitudeGain>2 3 0.15</attitudeGain>
        <angularRateGain>0.4 0.52 0.18</angularRateGain>
        <maximumLinearAcceleration>2 2 2</maximumLinearAcceleration>
        <maximumLinearVelocity>5 5 5</maximumLinearVelocity>
        <maximumAngularVelocity>3 3 3</maximumAngularVelocity>
        <rotorConfiguration>{}</rotorConfiguration>
      </plugin>)",
                     ns, rotors);
}
}  // namespace

std::string quad_model(const QuadOptions& o) {
  std::string s = fmt::format(R"(
    <model name="{name}">
      <pose>{x} {y} {z} 0 0 0</pose>
      <link name="base_link">
        <inertial><mass>1.5</mass>
          <inertia><ixx>0.0347563</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.07</iyy><iyz>0</iyz>
                   <izz>0.0977</izz></inertia></inertial>
        <collision name="collision">
          <geometry><box><size>0.3 0.3 0.11</size></box></geometry>
        </collision>
      </link>)",
                              fmt::arg("name", o.name), fmt::arg("x", o.x), fmt::arg("y", o.y),
                              fmt::arg("z", o.z));
  for (int i = 0; i < 4; ++i) s += rotor_link(i);
  for (int i = 0; i < 4; ++i) s += motor_plugin(i, o.motor_extra, o.name);
  if (o.velocity_control) s += velocity_control(o.name);
  s += o.model_extra;
  s += "\n    </model>";
  return s;
}

std::string quad_world(const QuadOptions& o) {
  std::string ground;
  if (o.ground) {
    ground = R"(
    <model name="ground_plane"><static>true</static>
      <link name="link"><collision name="c"><geometry><plane><normal>0 0 1</normal>
        <size>100 100</size></plane></geometry></collision></link>
    </model>)";
  }
  return fmt::format(R"(<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <physics type="ode"><max_step_size>{step}</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 -9.8</gravity>{ground}{model}{extra}
  </world>
</sdf>
)",
                     fmt::arg("step", o.step), fmt::arg("ground", ground),
                     fmt::arg("model", quad_model(o)), fmt::arg("extra", o.world_extra));
}

std::filesystem::path write_temp(const std::string& text, const std::string& ext) {
  static std::atomic<int> counter{0};
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("kestrel_mc_{}_{}{}", ::getpid(), counter++, ext);
  std::ofstream(path) << text;
  return path;
}

LoadedWorld::LoadedWorld(const std::string& sdf, bool configure) {
  file = write_temp(sdf);
  sim::Runner::Options o;
  o.real_time_factor = 0;
  runner = std::make_unique<sim::Runner>(o);
  try {
    setup = world::load_world_into_runner(file, *runner);
    if (configure) runner->configure();
  } catch (...) {
    std::filesystem::remove(file);
    throw;
  }
}

LoadedWorld::~LoadedWorld() { std::filesystem::remove(file); }

ecs::Entity LoadedWorld::find(const std::string& scoped) const {
  const ecs::Entity e = runner->registry().find_scoped(scoped);
  if (e == ecs::kNullEntity) throw Error("test: no entity " + scoped);
  return e;
}

void LoadedWorld::step(int n) {
  for (int i = 0; i < n; ++i) runner->step_once();
}

double LoadedWorld::t() const { return to_seconds(runner->info().sim_time); }

std::string load_error(const std::string& sdf) {
  try {
    LoadedWorld w(sdf);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

struct CapturedLog::Impl {
  std::ostringstream text;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink =
      std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
};

CapturedLog::CapturedLog() : impl_(std::make_unique<Impl>()) {
  ::kestrel::log::init();  // the default logger this sink joins (a Runner made later keeps it)
  impl_->sink->set_pattern("%l: %v");
  spdlog::default_logger()->sinks().push_back(impl_->sink);
}

CapturedLog::~CapturedLog() { std::erase(spdlog::default_logger()->sinks(), impl_->sink); }

std::string CapturedLog::text() const { return impl_->text.str(); }

}  // namespace kestrel::systems::testing
