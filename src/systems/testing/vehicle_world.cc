#include "testing/vehicle_world.h"

#include <fmt/format.h>

namespace kestrel::systems::testing {

namespace {

std::string wheel(const std::string& name, const std::string& pose, const std::string& surface) {
  return fmt::format(R"(
      <link name="{name}">
        <pose>{pose}</pose>
        <inertial><mass>2</mass>
          <inertia><ixx>0.145833</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.145833</iyy><iyz>0</iyz>
                   <izz>0.125</izz></inertia></inertial>
        <collision name="collision">
          <geometry><sphere><radius>0.3</radius></sphere></geometry>{surface}
        </collision>
      </link>)",
                     fmt::arg("name", name), fmt::arg("pose", pose), fmt::arg("surface", surface));
}

std::string hinge(const std::string& name, const std::string& child) {
  return fmt::format(R"(
      <joint name="{name}" type="revolute">
        <parent>chassis</parent><child>{child}</child>
        <axis><xyz>0 0 1</xyz><limit><lower>-1.79769e+308</lower><upper>1.79769e+308</upper>
        </limit></axis>
      </joint>)",
                     fmt::arg("name", name), fmt::arg("child", child));
}

}  // namespace

std::string vehicle_model(const VehicleOptions& o) {
  std::string s = fmt::format(R"(
    <model name="{name}">
      <pose>{pose}</pose>
      <link name="chassis">
        <pose>-0.151427 0 0.175 0 0 0</pose>
        <inertial><mass>1.14395</mass>
          <inertia><ixx>0.126164</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.416519</iyy><iyz>0</iyz>
                   <izz>0.481014</izz></inertia></inertial>
        <collision name="collision">
          <geometry><box><size>2.01142 1 0.568726</size></box></geometry>
        </collision>
      </link>)",
                              fmt::arg("name", o.name), fmt::arg("pose", o.pose));
  if (o.skid) {
    auto surface = [&](const char* fdir1) {
      if (!o.mecanum_rollers) return o.wheel_surface;
      return fmt::format(
          "<surface><friction><ode><mu>1.0</mu><mu2>0.0</mu2>"
          "<fdir1 ignition:expressed_in=\"chassis\">{}</fdir1></ode></friction></surface>",
          fdir1);
    };
    s += wheel("front_left_wheel", "0.554283 0.625029 -0.025 -1.5707 0 0", surface("1 -1 0"));
    s += wheel("rear_left_wheel", "-0.957138 0.625029 -0.025 -1.5707 0 0", surface("1 1 0"));
    s += wheel("front_right_wheel", "0.554282 -0.625029 -0.025 -1.5707 0 0", surface("1 1 0"));
    s += wheel("rear_right_wheel", "-0.957138 -0.625029 -0.025 -1.5707 0 0", surface("1 -1 0"));
    s += hinge("front_left_wheel_joint", "front_left_wheel");
    s += hinge("front_right_wheel_joint", "front_right_wheel");
    s += hinge("rear_left_wheel_joint", "rear_left_wheel");
    s += hinge("rear_right_wheel_joint", "rear_right_wheel");
  } else {
    s += wheel("left_wheel", "0.554283 0.625029 -0.025 -1.5707 0 0", o.wheel_surface);
    s += wheel("right_wheel", "0.554282 -0.625029 -0.025 -1.5707 0 0", o.wheel_surface);
    s += R"(
      <link name="caster">
        <pose>-0.957138 0 -0.125 0 0 0</pose>
        <inertial><mass>1</mass>
          <inertia><ixx>0.1</ixx><ixy>0</ixy><ixz>0</ixz><iyy>0.1</iyy><iyz>0</iyz>
                   <izz>0.1</izz></inertia></inertial>
        <collision name="collision"><geometry><sphere><radius>0.2</radius></sphere></geometry>
        </collision>
      </link>)";
    s += hinge("left_wheel_joint", "left_wheel");
    s += hinge("right_wheel_joint", "right_wheel");
    s += R"(
      <joint name="caster_wheel" type="ball"><parent>chassis</parent><child>caster</child>
      </joint>)";
  }
  s += o.plugins;
  s += "\n    </model>";
  return s;
}

std::string ground_world(const std::string& models, const std::string& extra, double step) {
  return fmt::format(R"(<?xml version="1.0"?>
<sdf version="1.6">
  <world name="w">
    <physics name="1ms" type="ignored"><max_step_size>{step}</max_step_size>
      <real_time_factor>0</real_time_factor></physics>
    <model name="ground_plane"><static>true</static>
      <link name="link"><collision name="collision"><geometry><plane><normal>0 0 1</normal>
        <size>100 100</size></plane></geometry></collision></link>
    </model>{models}{extra}
  </world>
</sdf>
)",
                     fmt::arg("step", step), fmt::arg("models", models), fmt::arg("extra", extra));
}

}  // namespace kestrel::systems::testing
