// make-swarm: the vehicle is written once as a template with three holes (name, pose, mission);
// each vehicle is a copy with its own values.

#include "kestrel/systems/swarm.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "kestrel/core/error.h"

namespace kestrel::systems {
namespace {

constexpr double kRotor[4][2] = {{0.13, -0.22}, {-0.13, 0.2}, {0.13, 0.22}, {-0.13, -0.2}};

std::string vehicle_template(bool sensors) {
  std::string s = R"(
    <model name="@NAME@">
      <pose>@POSE@</pose>
      <link name="base_link">
        <inertial><mass>1.5</mass>
          <inertia><ixx>0.0347563</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.07</iyy><iyz>0</iyz>
                   <izz>0.0977</izz></inertia></inertial>
        <collision name="collision"><geometry><box><size>0.30 0.42 0.11</size></box></geometry>
        </collision>)";
  if (sensors) {
    s += R"(
        <sensor name="imu_sensor" type="imu"><always_on>1</always_on><update_rate>250</update_rate></sensor>
        <sensor name="magnetometer" type="magnetometer"><always_on>1</always_on><update_rate>100</update_rate></sensor>
        <sensor name="air_pressure" type="air_pressure"><always_on>1</always_on><update_rate>50</update_rate></sensor>
        <sensor name="navsat" type="navsat"><always_on>1</always_on><update_rate>10</update_rate></sensor>)";
  }
  s += "\n      </link>";
  std::string rotors;
  for (int i = 0; i < 4; ++i) {
    s += fmt::format(R"(
      <link name="rotor_{i}"><pose>{x} {y} 0.023 0 0 0</pose>
        <inertial><mass>0.005</mass>
          <inertia><ixx>9.75e-07</ixx><ixy>0</ixy><ixz>0</ixz><iyy>4.17041e-05</iyy><iyz>0</iyz>
                   <izz>4.26041e-05</izz></inertia></inertial>
      </link>
      <joint name="rotor_{i}_joint" type="revolute"><parent>base_link</parent><child>rotor_{i}</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis>
      </joint>
      <plugin filename="gz-sim-multicopter-motor-model-system" name="gz::sim::systems::MulticopterMotorModel">
        <robotNamespace>@NAME@</robotNamespace><jointName>rotor_{i}_joint</jointName>
        <linkName>rotor_{i}</linkName><turningDirection>{dir}</turningDirection>
        <timeConstantUp>0.0125</timeConstantUp><timeConstantDown>0.025</timeConstantDown>
        <maxRotVelocity>800.0</maxRotVelocity><motorConstant>8.54858e-06</motorConstant>
        <momentConstant>0.016</momentConstant><commandSubTopic>command/motor_speed</commandSubTopic>
        <actuator_number>{i}</actuator_number><rotorDragCoefficient>8.06428e-05</rotorDragCoefficient>
        <rollingMomentCoefficient>1e-06</rollingMomentCoefficient>
        <rotorVelocitySlowdownSim>10</rotorVelocitySlowdownSim><motorType>velocity</motorType>
      </plugin>)",
                     fmt::arg("i", i), fmt::arg("x", kRotor[i][0]), fmt::arg("y", kRotor[i][1]),
                     fmt::arg("dir", i < 2 ? "ccw" : "cw"));
    rotors += fmt::format(
        "<rotor><jointName>rotor_{}_joint</jointName><forceConstant>8.54858e-06</forceConstant>"
        "<momentConstant>0.016</momentConstant><direction>{}</direction></rotor>",
        i, i < 2 ? 1 : -1);
  }
  s += R"(
      <plugin filename="gz-sim-multicopter-control-system" name="gz::sim::systems::MulticopterVelocityControl">
        <robotNamespace>@NAME@</robotNamespace><commandSubTopic>gazebo/command/twist</commandSubTopic>
        <enableSubTopic>enable</enableSubTopic><comLinkName>base_link</comLinkName>
        <velocityGain>2.7 2.7 2.7</velocityGain><attitudeGain>2 3 0.15</attitudeGain>
        <angularRateGain>0.4 0.52 0.18</angularRateGain>
        <maximumLinearAcceleration>2 2 2</maximumLinearAcceleration>
        <rotorConfiguration>)" +
       rotors + R"(</rotorConfiguration>
      </plugin>
      <plugin filename="kestrel-multicopter-mission-system" name="kestrel::systems::MulticopterMission">
        <comLinkName>base_link</comLinkName><start_time>@START@</start_time><cruise_speed>2</cruise_speed>
        <timeout>300</timeout>@MISSION@
      </plugin>
    </model>)";
  return s;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Vehicle i's pattern: a polygon (3, 4 or 6 corners) or an out-and-back line, sized and turned
// by its index, flown around its own take-off point, then home and land.
std::string mission(int i, double x0, double y0) {
  const int kind = i % 4;
  const int corners = kind == 0 ? 4 : kind == 1 ? 3 : kind == 2 ? 6 : 2;
  const double size = 2.0 + (i % 4);          // [m]: patterns stay inside their grid cell
  const double alt = 3.0 + (i % 7) * 0.5;     // [m]
  const double heading = (i % 8) * M_PI / 4;  // [rad]
  std::string m = fmt::format("\n        <takeoff altitude=\"{}\"/>", alt);
  for (int k = 1; k <= corners; ++k) {
    const double a = heading + 2 * M_PI * k / corners;
    const double r = corners == 2 ? size * (k % 2) : size;
    const double px = x0 + r * std::cos(a) - (corners == 2 ? 0 : size * std::cos(heading));
    const double py = y0 + r * std::sin(a) - (corners == 2 ? 0 : size * std::sin(heading));
    m += fmt::format("\n        <waypoint>{:.3f} {:.3f} {}</waypoint>", px, py, alt);
  }
  m += fmt::format("\n        <waypoint>{:.3f} {:.3f} {}</waypoint>\n        <land/>", x0, y0, alt);
  return m;
}

}  // namespace

std::string make_swarm_world(const SwarmOptions& o) {
  if (o.count < 1 || o.count > 100000) {
    throw Error(fmt::format("make-swarm: N must be 1..100000, found {}", o.count));
  }
  if (!(o.spacing > 0) || !std::isfinite(o.spacing)) {
    throw Error(fmt::format("make-swarm: spacing must be > 0 m, found {}", o.spacing));
  }
  const std::string tmpl = vehicle_template(o.sensors);
  std::string out = fmt::format(R"(<?xml version="1.0"?>
<!-- Generated by `kestrel make-swarm {n}`: {n} X3-class quadcopters, each flying its own pattern.
     Run: kestrel run THIS_FILE -->
<sdf version="1.9">
  <world name="swarm_{n}">
    <physics name="1ms" type="ode"><max_step_size>0.001</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <gravity>0 0 -9.8</gravity>
    <wind><linear_velocity>{wind} 0 0</linear_velocity></wind>)",
                                fmt::arg("n", o.count), fmt::arg("wind", o.wind));
  if (o.sensors) {
    out += R"(
    <plugin filename="gz-sim-imu-system" name="gz::sim::systems::Imu"/>
    <plugin filename="gz-sim-magnetometer-system" name="gz::sim::systems::Magnetometer"/>
    <plugin filename="gz-sim-air-pressure-system" name="gz::sim::systems::AirPressure"/>
    <plugin filename="gz-sim-navsat-system" name="gz::sim::systems::NavSat"/>)";
  }
  out += R"(
    <plugin filename="kestrel-fault-injection-system" name="kestrel::systems::FaultInjection"/>
    <model name="ground_plane"><static>true</static>
      <link name="link"><collision name="collision"><geometry><plane><normal>0 0 1</normal>
        <size>1000 1000</size></plane></geometry></collision></link>
    </model>)";
  const int side = static_cast<int>(std::ceil(std::sqrt(o.count)));
  out.reserve(out.size() + static_cast<std::size_t>(o.count) * (tmpl.size() + 600));
  for (int i = 0; i < o.count; ++i) {
    const double x = (i % side) * o.spacing * 3, y = (i / side) * o.spacing * 3;
    std::string v = tmpl;
    replace_all(v, "@NAME@", fmt::format("uav_{:04d}", i));
    replace_all(v, "@POSE@", fmt::format("{} {} 0.056 0 0 0", x, y));
    replace_all(v, "@START@", fmt::format("{}", 0.5 + 0.01 * (i % 50)));
    replace_all(v, "@MISSION@", mission(i, x, y));
    out += v;
  }
  out += "\n  </world>\n</sdf>\n";
  return out;
}

int run_make_swarm_command(const SwarmOptions& options, const std::string& output) {
  const std::string text = make_swarm_world(options);
  if (output.empty() || output == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream f(output, std::ios::binary | std::ios::trunc);
  if (!(f << text) || !f.flush()) throw Error(output, "cannot write the swarm world");
  std::fprintf(stderr, "kestrel: wrote %d vehicles to %s\n", options.count, output.c_str());
  return 0;
}

}  // namespace kestrel::systems
